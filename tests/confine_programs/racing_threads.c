/* One thread keeps flipping a path buffer between "ok.txt" and "x.pem" while
 * the main thread creates (O_CREAT|O_WRONLY|O_TRUNC, mode 0666 under umask
 * 027) and removes whatever the buffer names, for argv[1] rounds, then
 * creates ok.txt once more with the buffer at rest. A checker
 * that reads the path and then lets the kernel read it again would create
 * x.pem now and then. Prints "created=N refused=M pem-seen=K"; exits 2 if an
 * x.pem ever existed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static union {
  char text[8];
  uint64_t word;
} path __attribute__((aligned(8)));
static uint64_t okWord, pemWord;
static volatile int stop;

static void *flipper(void *arg) {
  (void)arg;
  while (!stop) {
    __atomic_store_n(&path.word, pemWord, __ATOMIC_RELAXED);
    __atomic_store_n(&path.word, okWord, __ATOMIC_RELAXED);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) return 64;
  long rounds = atol(argv[1]);
  char ok[8] = "ok.txt", pem[8] = "x.pem";
  memcpy(&okWord, ok, 8);
  memcpy(&pemWord, pem, 8);
  path.word = okWord;
  umask(027);
  pthread_t t;
  if (pthread_create(&t, NULL, flipper, NULL) != 0) return 70;
  long created = 0, refused = 0, pemSeen = 0;
  for (long i = 0; i < rounds; ++i) {
    int fd = open(path.text, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ++created;
      close(fd);
    } else if (errno == EACCES) {
      ++refused;
    }
    if (access("x.pem", F_OK) == 0) {
      ++pemSeen;
      unlink("x.pem");
    }
    unlink("ok.txt");
  }
  stop = 1;
  pthread_join(t, NULL);
  /* One last create with the buffer at rest: ok.txt must exist, with its mode. */
  int last = open(path.text, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0666);
  if (last < 0) return 3;
  close(last);
  printf("created=%ld refused=%ld pem-seen=%ld\n", created, refused, pemSeen);
  return pemSeen ? 2 : 0;
}

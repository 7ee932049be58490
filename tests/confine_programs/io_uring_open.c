/* Tries to create argv[1] through io_uring (IORING_OP_OPENAT), which would
 * bypass a seccomp filter on openat. Prints what happened; exits 0 only if
 * the ring opened the file. Raw system calls: no liburing needed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 64;
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  int ring = (int)syscall(__NR_io_uring_setup, 4, &p);
  if (ring < 0) {
    printf("io_uring_setup: %s\n", strerrorname_np(errno));
    return 3;
  }
  size_t sqSize = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cqSize = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  char *sq =
      mmap(0, sqSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
  char *cq =
      mmap(0, cqSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
  struct io_uring_sqe *sqes =
      mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
           MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
  if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
    printf("mmap: %s\n", strerrorname_np(errno));
    return 4;
  }
  unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
  unsigned *mask = (unsigned *)(sq + p.sq_off.ring_mask);
  unsigned *array = (unsigned *)(sq + p.sq_off.array);
  unsigned idx = *tail & *mask;
  memset(&sqes[idx], 0, sizeof sqes[idx]);
  sqes[idx].opcode = IORING_OP_OPENAT;
  sqes[idx].fd = AT_FDCWD;
  sqes[idx].addr = (unsigned long)argv[1];
  sqes[idx].len = 0644;
  sqes[idx].open_flags = O_CREAT | O_WRONLY | O_TRUNC;
  array[idx] = idx;
  __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
  int n = (int)syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
  if (n < 0) {
    printf("io_uring_enter: %s\n", strerrorname_np(errno));
    return 5;
  }
  struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
  unsigned head = *(unsigned *)(cq + p.cq_off.head);
  int res = cqes[head & *(unsigned *)(cq + p.cq_off.ring_mask)].res;
  if (res < 0) {
    printf("openat through the ring: %s\n", strerrorname_np(-res));
    return 6;
  }
  printf("opened through the ring\n");
  return 0;
}

// The supervisor's decision for one name a call would change. It mirrors the
// Landlock layer (the supervisor performs calls itself, outside the child's
// Landlock domain, so it must refuse what Landlock would) and adds what
// Landlock cannot express: final-name globs and protected paths inside roots.
#pragma once

#include "ccsandbox/confine/confine_rules.hpp"
#include "ccsandbox/confine/name_glob.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ccsandbox::confine {

enum class NameChange {
  create,  // a new name appears (open O_CREAT on a missing name, link, symlink, rename target…)
  createDirectory,  // a new, empty directory appears (mkdir)
  write,            // an existing object is written or truncated through this name
  remove,           // the name goes away (unlink, rmdir, rename source)
};

struct Verdict {
  bool allowed = true;
  std::string reason;  // for a refusal: the rule that refused it
};

class WriteJudge {
 public:
  // Rule paths are also kept in their symlink-resolved form, since the
  // supervisor judges resolved paths.
  explicit WriteJudge(const ConfineRules &rules);

  // `absolute` is the resolved path; a non-path magic-link target such as
  // "pipe:[12]" names no file and is allowed.
  Verdict judge(std::string_view absolute, NameChange change) const;

 private:
  NameGlobs globs_;
  std::vector<std::string> writeRoots_;
  std::vector<std::string> writeDeny_;
};

bool pathBeneathOrEqual(std::string_view path, std::string_view root);

}  // namespace ccsandbox::confine

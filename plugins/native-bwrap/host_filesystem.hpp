// The FilesystemView of the real host, for the mount plan.
#pragma once

#include "mount_plan.hpp"

namespace ccsandbox::bwrap {

class HostFilesystem final : public FilesystemView {
 public:
  PathInfo inspect(const std::string &path) const override;
};

}  // namespace ccsandbox::bwrap

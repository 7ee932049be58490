// Debian's Boost 1.81 ships Boost.JSON as headers only: every binary that uses
// the SDK (the core, the CLI, each plugin) compiles the library once, through
// this file. Visibility is hidden, so two plugins' copies never meet.
#include <boost/json/src.hpp>

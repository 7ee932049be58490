// Debian's Boost 1.81 ships Boost.JSON as headers only: every binary that uses
// the SDK compiles the library once, through this file, which the
// ccsandbox::sdk target adds to each of its consumers. Visibility is hidden,
// so two plugins' copies never meet.
#include <boost/json/src.hpp>

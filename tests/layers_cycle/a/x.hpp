// A fixture of tests/CMakeLists.txt (Layers.CheckFindsACycle): a includes b.
#include "b/y.hpp"

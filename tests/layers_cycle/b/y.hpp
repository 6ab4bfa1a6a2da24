// A fixture of tests/CMakeLists.txt (Layers.CheckFindsACycle): b includes a and c.
#include "a/x.hpp"
#include "c/z.hpp"

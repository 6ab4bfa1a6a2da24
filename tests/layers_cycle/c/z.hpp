// A fixture of tests/CMakeLists.txt (Layers.CheckFindsACycle): c includes no folder.
#pragma once

// tessel: a tile language for GPU kernels, embedded in C++.
//   #include <tessel/tessel.hpp>
//   namespace ts = tessel;
// See README.md and docs/DECISIONS.md.
#pragma once

#include "tessel/buffer.hpp"
#include "tessel/config.hpp"
#include "tessel/dtype.hpp"
#include "tessel/error.hpp"
#include "tessel/kernel.hpp"
#include "tessel/language.hpp"
#include "tessel/sm_partition.hpp"
#include "tessel/stream.hpp"
#include "tessel/symmetric_buffer.hpp"

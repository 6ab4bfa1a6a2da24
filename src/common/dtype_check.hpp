// Whether a DType value is one of the enumerators (an integer cast to DType may not be),
// and the error that names one that is not.
#pragma once

#include <string>

#include "tessel/dtype.hpp"

namespace tessel {

/// True for each enumerator of DType.
bool is_known_dtype(DType t);
/// "42 is not a ts::DType (an integer cast to DType?)".
std::string unknown_dtype_what(DType t);
/// The dtypes to use instead.
const char* unknown_dtype_hint();

}  // namespace tessel

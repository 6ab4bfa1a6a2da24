#include "autotune/search.hpp"

namespace tessel::autotune {

void list_search(Trials& t, const std::vector<Config>& configs) { t.run_configs(configs); }

}  // namespace tessel::autotune

#include "driver/code_override.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "codegen/embedded.hpp"
#include "driver/code_dump.hpp"
#include "driver/compile_log.hpp"
#include "driver/cubin_cache.hpp"
#include "driver/cuda_api.hpp"

namespace tessel::rt {

namespace fs = std::filesystem;

namespace {

const char* const kHint =
    "fix the file, or remove it (or unset TESSEL_OVERRIDE_DIR) to use the generated code";

std::string read_text(const std::string& kernel, SourceLoc at, const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in && !in.eof())
    throw UserError(kernel, at, fmt::format("TESSEL_OVERRIDE_DIR: {} cannot be read", p.string()),
                    kHint);
  return s.str();
}

// Says on stderr which files in `dir` are named for generated kernel `k` but not for this
// call (`tag`: its specialization and config; sm_`arch`): dumped where TESSEL_TARGET_ARCH, the
// GPU, the arguments' size bucket or the config differed. This call passes them by.
void note_passed_by(const std::string& kernel, const fs::path& dir, const codegen::CudaKernel& k,
                    const std::string& tag, int arch) {
  const std::string stem = k.name + "-spec_", ours = k.name + tag + ".sm_";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string ext = e.path().extension().string();
    if (name.rfind(stem, 0) != 0 || (ext != ".cu" && ext != ".ptx")) continue;
    // A .cu is named by the target it was lowered for, a .ptx by the one it was compiled for.
    const int want = ext == ".cu" ? k.arch : arch;
    if (name.rfind(ours, 0) != 0) {
      std::cerr << fmt::format(
          "tessel: kernel '{}': TESSEL_OVERRIDE_DIR: {} is for another specialization or config "
          "of {} (this call's files are named {}{}.sm_{}{}): the generated code is used\n",
          kernel, e.path().string(), k.name, k.name, tag, want, ext);
      continue;
    }
    const std::string target = name.substr(ours.size(), name.find('.', ours.size()) - ours.size());
    if (target != std::to_string(want))
      std::cerr << fmt::format(
          "tessel: kernel '{}': TESSEL_OVERRIDE_DIR: {} is for sm_{}, not the sm_{} this call "
          "compiles for: the generated code is used (dump it again for sm_{}, or rename it)\n",
          kernel, e.path().string(), target, want, want);
  }
}

// The parameter list of the __global__ function `name` in CUDA `src` (from its '(' to the
// matching ')'), each run of whitespace one space; "" when there is none.
std::string parameters_of(const std::string& src, const std::string& name) {
  const size_t global = src.find("__global__");
  if (global == std::string::npos) return "";
  size_t at = src.find(" " + name + "(", global);
  if (at == std::string::npos) return "";
  at += name.size() + 1;
  std::string out;
  int depth = 0;
  for (size_t i = at; i < src.size(); ++i) {
    const char c = src[i];
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
    if (depth == 0) break;
  }
  return out;
}

}  // namespace

std::string override_dir() {
  const char* v = std::getenv("TESSEL_OVERRIDE_DIR");
  return v && *v ? v : "";
}

KernelImage compile_kernel(const std::string& kernel, SourceLoc at, const codegen::CudaKernel& k,
                           const std::string& tag, int arch, bool want_ptx) {
  KernelImage out;
  std::string dir = override_dir();
  fs::path cu = fs::path(dir) / fmt::format("{}{}.sm_{}.cu", k.name, tag, k.arch);
  fs::path ptx = fs::path(dir) / fmt::format("{}{}.sm_{}.ptx", k.name, tag, arch);
  std::error_code ec;
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw UserError(kernel, at, fmt::format("TESSEL_OVERRIDE_DIR: {} is not a directory", dir),
                    "set it to the directory holding the edited .cu or .ptx files, or unset it");
  if (!dir.empty() && !dump_dir().empty() && fs::equivalent(dir, dump_dir(), ec))
    throw UserError(
        kernel, at,
        fmt::format("TESSEL_OVERRIDE_DIR and TESSEL_DUMP_DIR are one directory ({})", dir),
        "copy the dumped files to edit into a directory of their own and set "
        "TESSEL_OVERRIDE_DIR to it (a dump would overwrite the edits)");
  // The launch looks the kernel up by the generated name: an override that renamed it would
  // compile here and fail to load on a GPU.
  auto require_name = [&](const std::string& text, const std::string& file,
                          const std::string& declared) {
    if (text.find(declared) == std::string::npos)
      throw UserError(kernel, at,
                      fmt::format("TESSEL_OVERRIDE_DIR: {} does not define the kernel {} (no "
                                  "'{}'): the launch calls it by that name",
                                  file, k.name, declared),
                      "keep the generated kernel's name and parameters in the edited file");
  };
  if (!dir.empty() && fs::is_regular_file(ptx, ec)) {
    out.override = ptx.string();
    out.ptx = read_text(kernel, at, ptx);
    out.override_text = out.ptx;
    require_name(out.ptx, out.override, ".entry " + k.name + "(");
    out.image = out.ptx;
    out.ptx_override = true;
    std::cerr << fmt::format(
        "tessel: kernel '{}': TESSEL_OVERRIDE_DIR: loading {} in place of the PTX of the "
        "generated {}\n",
        kernel, out.override, k.name);
    return out;
  }
  CompileOptions opts;
  opts.arch = arch;
  opts.headers = embedded_headers();
  opts.extra = k.nvrtc_options;
  const std::string* source = &k.source;
  std::string text;
  if (!dir.empty() && fs::is_regular_file(cu, ec)) {
    out.override = cu.string();
    text = read_text(kernel, at, cu);
    require_name(text, out.override, " " + k.name + "(");
    // Without extern "C" the name is mangled: NVRTC compiles it, the launch cannot find it.
    if (!std::regex_search(
            text, std::regex("extern\\s+\"C\"\\s+__global__[^;{]*\\s" + k.name + "\\s*\\(")))
      throw UserError(kernel, at,
                      fmt::format("TESSEL_OVERRIDE_DIR: {} does not declare the kernel {} extern "
                                  "\"C\" __global__: its name would be mangled, and the launch "
                                  "calls it by that name",
                                  out.override, k.name),
                      "keep the generated kernel's declaration (extern \"C\" __global__ void "
                      "... " +
                          k.name + "(...)) in the edited file");
    // The launch passes the generated kernel's arguments: an override of other parameters
    // (one lowered for another target, say) would read them as something else.
    if (const std::string want = parameters_of(k.source, k.name);
        parameters_of(text, k.name) != want)
      throw UserError(kernel, at,
                      fmt::format("TESSEL_OVERRIDE_DIR: the parameters of {} in {} differ from "
                                  "the generated kernel's, which the launch passes: {}",
                                  k.name, out.override, want),
                      "keep the generated kernel's name and parameters in the edited file");
    source = &text;
    out.override_text = text;
    std::cerr << fmt::format(
        "tessel: kernel '{}': TESSEL_OVERRIDE_DIR: compiling {} in place of the generated {}\n",
        kernel, out.override, k.name);
  }
  if (!dir.empty() && out.override.empty()) note_passed_by(kernel, dir, k, tag, arch);
  // NVRTC's log names the file it compiled.
  const std::string program =
      out.override.empty() ? k.name + ".cu" : fs::path(out.override).filename().string();
  try {
    if (want_ptx)
      out.image = compile_cuda(*source, program, opts, &out.ptx);
    else
      out.image = compile_cached(*source, program, opts);
  } catch (const CompileError& e) {
    if (out.override.empty()) throw;
    throw UserError(kernel, at,
                    fmt::format("TESSEL_OVERRIDE_DIR: NVRTC could not compile {} (in place of "
                                "the generated {}):\n{}",
                                out.override, k.name, compile_log_errors(e.log)),
                    kHint);
  }
  return out;
}

void fail_ptx_override(const std::string& kernel, SourceLoc at, const std::string& file,
                       const std::string& why) {
  throw UserError(kernel, at,
                  fmt::format("TESSEL_OVERRIDE_DIR: the driver could not load {}: {}", file, why),
                  kHint);
}

}  // namespace tessel::rt

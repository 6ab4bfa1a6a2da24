#include "driver/code_dump.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "driver/code_override.hpp"
#include "driver/cuda_api.hpp"
#include "driver/gpu_program.hpp"

namespace tessel::rt {

namespace fs = std::filesystem;

namespace {

std::string hex8(const std::string& s) {
  return fmt::format("{:016x}", XXH3_64bits(s.data(), s.size())).substr(0, 8);
}

// Writes `text` to `path` through a temporary file and a rename (a reader never sees half
// a file). Errors: UserError naming kernel `kernel`, the path and the OS error.
void write_file(const std::string& kernel, SourceLoc at, const fs::path& path,
                const std::string& text) {
  auto fail = [&](const fs::path& p, const std::string& why) {
    std::string dir = dump_dir(), where = p.string();
    bool is_dir = where == dir || where + "/" == dir;
    throw UserError(kernel, at,
                    fmt::format("TESSEL_DUMP_DIR={} cannot be written: {}{}", dir,
                                is_dir ? "" : where + ": ", why),
                    "set TESSEL_DUMP_DIR to a writable directory, or unset it to dump nothing");
  };
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) fail(path.parent_path(), ec.message());
  fs::path tmp = path;
  tmp += ".tmp";
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (out) out.close();
    if (!out) fail(tmp, errno ? std::strerror(errno) : "the write failed");
  }
  fs::rename(tmp, path, ec);
  if (ec) fail(path, ec.message());
}

}  // namespace

std::string dump_dir() {
  const char* v = std::getenv("TESSEL_DUMP_DIR");
  return v && *v ? v : "";
}

CodeDump::CodeDump(const ir::Graph& g, const std::string& spec_key, const Config& config)
    : dir_(dump_dir()),
      kernel_(g.kernel_name),
      at_(ir::first_loop_loc(g)),
      spec_key_(spec_key),
      config_json_(config.to_json()),
      tag_("-spec_" + hex8(spec_key) + "-config_" + hex8(config_json_)),
      target_(dir_.empty() ? "" : fmt::format(".sm_{}", target_arch())) {}

std::string CodeDump::stem() const {
  // The file name keeps the kernel's name readable (and short: codegen::kernel_identifier);
  // the stages differ by target.
  return codegen::kernel_identifier(kernel_) + tag_ + target_;
}

void CodeDump::ir(const ir::Graph& g) const {
  if (dir_.empty()) return;
  write_file(kernel_, at_, fs::path(dir_) / (stem() + ".ir"),
             fmt::format("// kernel '{}'\n// specialization key: {}\n// config: {}\n{}", kernel_,
                         spec_key_, config_json_, ir::print(g)));
}

void CodeDump::stages(const codegen::CompiledStages& stages) const {
  if (dir_.empty()) return;
  for (const codegen::StageIr& s : stages.stage_ir)
    write_file(
        kernel_, at_,
        fs::path(dir_) / (stem() + ".stages") / fmt::format("{:02}-{}.ir", s.number, s.stage),
        fmt::format("// kernel '{}'\n// specialization key: {}\n{}", kernel_, spec_key_, s.ir));
}

void CodeDump::failure(const codegen::CompiledStages& stages, const std::string& error) const {
  if (dir_.empty()) return;
  this->stages(stages);
  write_file(kernel_, at_, fs::path(dir_) / (stem() + ".stages") / "failure.txt",
             fmt::format("// kernel '{}'\n// specialization key: {}\n// config: {}\n{}\n", kernel_,
                         spec_key_, config_json_, error));
}

codegen::PipelineOptions dumped_pipeline(codegen::PipelineOptions::Emit emit,
                                         const std::string& spec_key) {
  codegen::PipelineOptions options{.emit = emit, .arch = target_arch()};
  if (dump_dir().empty()) return options;
  options.record_ir = true;
  options.on_failure = [spec_key](const codegen::CompiledStages& s, const std::string& error) {
    CodeDump(*s.traced, spec_key, s.config).failure(s, error);
  };
  return options;
}

void CodeDump::cuda(const codegen::CudaKernel& k) const {
  if (dir_.empty()) return;
  write_file(kernel_, at_, fs::path(dir_) / fmt::format("{}{}.sm_{}.cu", k.name, tag_, k.arch),
             k.source);
}

void CodeDump::binary(const codegen::CudaKernel& k, int arch, const std::string& ptx,
                      const std::string& cubin) const {
  if (dir_.empty()) return;
  std::string stem = fmt::format("{}{}.sm_{}", k.name, tag_, arch);
  if (!ptx.empty()) write_file(kernel_, at_, fs::path(dir_) / (stem + ".ptx"), ptx);
  if (!cubin.empty()) write_file(kernel_, at_, fs::path(dir_) / (stem + ".cubin"), cubin);
}

void show_interpreted_code(const ir::Graph& g, const Config& config, const Settings& settings,
                           const std::string& spec_key, bool tunes) {
  bool print = print_code_requested(settings);
  if (!print && dump_dir().empty()) return;
  codegen::CompiledStages stages = codegen::compile_pipeline(
      g, config, dumped_pipeline(codegen::PipelineOptions::Emit::all_reporting_failures, spec_key));
  CodeDump dump(g, spec_key, stages.config);
  dump.ir(stages.program());
  dump.stages(stages);
  bool compile = !dump_dir().empty() && nvrtc_available();
  if (!dump_dir().empty() && !compile)
    std::cerr << "// TESSEL_DUMP_DIR: NVRTC was not found (CUDA_HOME, /usr/local/cuda): the IR "
                 "and CUDA are written, no PTX or cubin\n";
  std::ostringstream out;
  const int arch = target_arch();
  out << fmt::format(
      "// TESSEL_PRINT_CODE: kernel '{}' runs on the interpreter; a GPU would compile the CUDA "
      "below (config {}, lowered for sm_{}){}.\n",
      g.kernel_name, stages.config.to_json(), arch,
      tunes ? ", after autotuning (Settings::autotune_effort), which may choose another config"
            : "");
  std::string failures;  // the stages' failure.txt, as a GPU call's failing config writes it
  for (const codegen::LoopStages& l : stages.loops) {
    if (!l.failure.empty()) {
      out << fmt::format("// no CUDA for the loop at {}: {}\n", l.loop->loc.str(), l.failure);
      failures += fmt::format("the loop at {}: {}\n", l.loop->loc.str(), l.failure);
      continue;
    }
    const codegen::CudaKernel& k = l.kernel;
    out << k.source;
    dump.cuda(k);
    if (!compile) continue;
    KernelImage image;
    try {
      image = compile_kernel(g.kernel_name, l.loop->loc, k, dump.tag(), arch, /*want_ptx=*/true);
    } catch (const CompileError& e) {
      out << fmt::format("// NVRTC could not compile {} for sm_{}:\n{}\n", k.name, arch, e.log);
      continue;
    }
    // A PTX override is compiled by a GPU's driver: there is no cubin here.
    dump.binary(k, arch, image.ptx, image.ptx_override ? "" : image.image);
  }
  if (stages.loops.empty())
    out << fmt::format("// kernel '{}' has no top-level loop: a GPU would compile nothing.\n",
                       g.kernel_name);
  if (!failures.empty()) dump.failure(stages, failures);
  if (print) std::cerr << out.str() << std::flush;
}

}  // namespace tessel::rt

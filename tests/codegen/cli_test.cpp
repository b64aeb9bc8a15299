// `tessel compile` then `tessel sim DIR` through the CLI registry, on a temporary folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/zoo.hpp"
#include "support/cli.hpp"
#include "support/npy.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

int run(std::vector<std::string> args) {
  return cli::run_args(std::move(args));
}

TEST(CompileCli, compile_folder_runs_on_the_simulator_with_the_predicted_bytes) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_tiny_residual";
  fs::remove_all(dir);
  ASSERT_EQ(run({"compile", "--model", "tiny_residual", "--hw", "edge-small", "--policy", "optimal",
                 "--out", dir.string()}),
            0);
  for (const char* file :
       {"program.bin", "program.tasm", "dram.bin", "schedule.json", "compile.json", "hw.yaml"})
    EXPECT_TRUE(fs::exists(dir / file)) << file;
  std::ifstream in(dir / "compile.json");
  const auto j = nlohmann::json::parse(in);
  // tiny_residual on edge-small, optimal: one group; conv1 + conv2 weights 2 x (4*4*9 + 4*4).
  EXPECT_EQ(j["groups"].size(), 1u);
  EXPECT_EQ(j["dram_bytes"]["weights_read"], 320);
  EXPECT_EQ(j["dram_bytes"]["requant_tables_read"], 64);  // 2 convs x 4 channels x 8 B
  EXPECT_EQ(j["dram_bytes"]["activations_read"], j["predicted_dram_bytes"]["activations_read"]);
  EXPECT_EQ(j["dram_bytes"]["activations_written"],
            j["predicted_dram_bytes"]["activations_written"]);
  EXPECT_EQ(j["dram_bytes"]["weights_read"], j["predicted_dram_bytes"]["weights_read"]);
  EXPECT_EQ(run({"sim", dir.string(), "--json", (dir / "sim.json").string()}), 0);
  EXPECT_TRUE(fs::exists(dir / "sim.json"));
  // Instruction fetch (issue 35 item 6): the schedule's prediction counts the program's fetch,
  // which the simulator reads from DRAM, byte for byte; the compile folder's schedule.json too.
  std::ifstream sim_in(dir / "sim.json");
  const auto sim = nlohmann::json::parse(sim_in);
  const auto fetched = sim["dram_bytes"]["read_by_kind"]["instructions"].get<std::int64_t>();
  EXPECT_GT(fetched, 0);
  EXPECT_EQ(j["predicted_dram_bytes"]["instructions_read"], fetched);
  EXPECT_EQ(j["dram_bytes"]["instructions_read"], fetched);
  std::ifstream schedule_in(dir / "schedule.json");
  EXPECT_EQ(nlohmann::json::parse(schedule_in)["instruction_fetch_bytes"], fetched);
  // `tessel schedule`, which has no program, predicts the same fetch from the schedule alone,
  // and its DRAM and energy totals count it.
  const fs::path schedule_json = dir / "predicted.json";
  ASSERT_EQ(run({"schedule", "--model", "tiny_residual", "--hw", "edge-small", "--policy",
                 "optimal", "--quiet", "--json", schedule_json.string()}),
            0);
  std::ifstream predicted_in(schedule_json);
  const auto predicted = nlohmann::json::parse(predicted_in);
  EXPECT_EQ(predicted["instruction_fetch_bytes"], fetched);
  EXPECT_EQ(predicted["predicted_counts"]["instruction_fetch_bytes"], fetched);
  EXPECT_FALSE(predicted["predicted_energy_pj"].contains("not_counted"));
  // A compile folder also gets the dequantized output and a report with per-group rows.
  const NpyArray output = read_npy((dir / "output.npy").string());
  EXPECT_EQ(output.dtype, NpyDtype::f32);
  EXPECT_EQ(output.shape, (std::vector<std::int64_t>{1, 4, 8, 8}));  // tiny_residual's output
  std::ifstream report_in(dir / "report.json");
  const auto report = nlohmann::json::parse(report_in);
  ASSERT_EQ(report["groups"].size(), 1u);
  EXPECT_GT(report["groups"][0]["cycles"].get<std::int64_t>(), 0);
  EXPECT_LE(report["groups"][0]["cycles"], report["cycles"]);
  EXPECT_EQ(report["groups"][0]["dram_bytes"]["weights_read"], 320);
  EXPECT_EQ(report["compulsory_bytes"], j["compulsory_bytes"]);
  EXPECT_GT(report["roofline_cycles"].get<std::int64_t>(), 0);
  // tiny_residual has no Gemm: the lower bound is the roofline, and the run does not beat it.
  EXPECT_EQ(report["lower_bound_cycles"], report["roofline_cycles"]);
  EXPECT_EQ(report["lower_bound_cycles"], j["lower_bound_cycles"]);
  EXPECT_GE(report["cycles"].get<std::int64_t>(), report["lower_bound_cycles"].get<std::int64_t>());
}

// tiny_mlp ends in a Softmax, which the accelerator lacks: the program stops after fc2's
// group, `tessel sim DIR` stores fc2's integers for the host, runs the host part (Dequantize,
// Softmax) on the golden executor and writes the network output, equal to the golden
// executor's run of the whole quantized graph (what `tessel infer` computes) bit for bit.
TEST(CompileCli, host_ops_run_after_the_program_and_match_the_golden_executor) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_tiny_mlp";
  fs::remove_all(dir);
  ASSERT_EQ(run({"compile", "--model", "tiny_mlp", "--hw", "vta-pynq", "--policy", "opfusion",
                 "--out", dir.string()}),
            0);
  EXPECT_TRUE(fs::exists(dir / "host.json"));
  std::ifstream in(dir / "compile.json");
  const auto j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.contains("host"));
  EXPECT_EQ(j["host"]["ops"], nlohmann::json::array({"softmax"}));
  EXPECT_EQ(j["host"]["outputs"], nlohmann::json::array({"softmax"}));
  ASSERT_EQ(j["host"]["inputs"].size(), 1u);
  EXPECT_EQ(j["host"]["inputs"][0]["ir_tensor"], "fc2");  // fc2 is Gemm + Requantize: already int8
  EXPECT_EQ(j["host"]["transfer_bytes"]["to_host"], 4);   // 4 int8 logits
  // The program's groups stop before the softmax; no group stores a float tensor.
  for (const auto& g : j["groups"]) EXPECT_NE(g["ops"].back(), "softmax");

  ASSERT_EQ(run({"sim", dir.string()}), 0);
  std::ifstream report_in(dir / "report.json");
  const auto report = nlohmann::json::parse(report_in);
  EXPECT_EQ(report["host"]["transfer_bytes"]["to_host"], 4);
  EXPECT_EQ(report["host"]["ran"], true);
  const NpyArray got = read_npy((dir / "output.npy").string());
  EXPECT_EQ(got.shape, (std::vector<std::int64_t>{1, 4}));

  // The golden executor on the same quantized graph and the same seeded input.
  auto prepared = cpu::prepare_graph(zoo::build_model("tiny_mlp").value());
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  quant::QuantConfig qconfig;
  qconfig.bits = 8;  // vta-pynq's matrix.input_bits
  auto quantized = cpu::quantize_model(prepared.value(), qconfig,
                                       cpu::synthetic_samples(prepared.value(), qconfig));
  ASSERT_TRUE(quantized.ok()) << quantized.reason();
  const ir::Graph& graph = quantized.value().graph;
  cpu::Executor executor(graph);
  const std::string input = graph.tensor(graph.op(graph.inputs()[0]).outputs[0]).name;
  auto golden = executor.run({{input, cpu::default_input(graph.tensor(input).shape)}});
  ASSERT_TRUE(golden.ok()) << golden.reason();
  const std::vector<float> expected = golden.value().at("softmax").to_npy().values<float>();
  EXPECT_EQ(got.values<float>(), expected);
  float sum = 0;
  for (float v : expected) sum += v;
  EXPECT_NEAR(sum, 1.0f, 1e-5f);  // a softmax, not zeros
}

// `tessel schedule` schedules the graph the policy compiles (passes::graph_for_policy): an
// export whose ops need the preparation's rewrites (here a Div by a constant, which
// div-by-constant turns into the Mul the accelerator has) schedules as `tessel compile` plans
// it, bytes and cycles. Before session 37 it refused: "Div is not supported".
TEST(CompileCli, schedule_plans_the_graph_the_policy_compiles) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_prepared";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path model = dir / "div.tir";
  std::string weights;
  for (int i = 0; i < 36; ++i) weights += (i ? ", " : "") + std::to_string((i % 7 - 3) / 8.0);
  std::ofstream(model) << "graph divnet {\n  input %x : f32[1,1,8,8]\n  const %w : f32[4,1,3,3] = ["
                       << weights << "]\n  const %d : f32[1] = [2]\n"
                       << "  %c = Conv(%x, %w) {kernel=3,3, stride=1,1, pad=1,1,1,1, group=1} "
                          ": f32[1,4,8,8]\n  %y = Div(%c, %d) : f32[1,4,8,8]\n  output %y\n}\n";
  const fs::path predicted = dir / "predicted.json";
  ASSERT_EQ(run({"schedule", "--model", model.string(), "--hw", "cloud-large", "--policy",
                 "optimal", "--quiet", "--json", predicted.string()}),
            0);
  const fs::path out = dir / "compiled";
  ASSERT_EQ(run({"compile", "--model", model.string(), "--hw", "cloud-large", "--policy", "optimal",
                 "--out", out.string()}),
            0);
  std::ifstream predicted_in(predicted), compiled_in(out / "schedule.json");
  const auto a = nlohmann::json::parse(predicted_in);
  const auto b = nlohmann::json::parse(compiled_in);
  EXPECT_EQ(a["dram_bytes"], b["dram_bytes"]);
  EXPECT_EQ(a["cycles"], b["cycles"]);
  EXPECT_EQ(a["groups"].size(), b["groups"].size());
  // By hand: the int8 input (64 B) read once, the 4 x 8 x 8 int8 output (256 B) written once.
  EXPECT_EQ(a["dram_bytes"]["activations_in"], 64);
  EXPECT_EQ(a["dram_bytes"]["activations_out"], 256);
}

TEST(CompileCli, an_unknown_policy_is_an_error) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_bad_policy";
  EXPECT_EQ(run({"compile", "--model", "tiny_conv", "--hw", "edge-small", "--policy", "greedy",
                 "--out", dir.string()}),
            1);
  EXPECT_FALSE(fs::exists(dir / "program.bin"));
}

// --objective reaches the scheduler and is recorded in compile.json, schedule.json and the sim
// report; an unknown one is an error naming the option, before anything is written.
TEST(CompileCli, the_objective_is_the_schedules_and_is_recorded) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_latency";
  fs::remove_all(dir);
  ASSERT_EQ(run({"compile", "--model", "tiny_residual", "--hw", "edge-small", "--policy", "optimal",
                 "--objective", "latency", "--out", dir.string()}),
            0);
  std::ifstream compile_in(dir / "compile.json");
  const auto compile = nlohmann::json::parse(compile_in);
  EXPECT_EQ(compile["objective"], "latency");
  std::ifstream schedule_in(dir / "schedule.json");
  EXPECT_EQ(nlohmann::json::parse(schedule_in)["objective"], "latency");
  ASSERT_EQ(run({"sim", dir.string(), "--timing-only"}), 0);
  std::ifstream report_in(dir / "report.json");
  EXPECT_EQ(nlohmann::json::parse(report_in)["compile"]["objective"], "latency");

  const fs::path bad = fs::path(testing::TempDir()) / "codegen_cli_bad_objective";
  fs::remove_all(bad);
  testing::internal::CaptureStderr();
  const int code = run({"compile", "--model", "tiny_conv", "--hw", "edge-small", "--policy",
                        "optimal", "--objective", "speed", "--out", bad.string()});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(code, 0);
  EXPECT_NE(err.find("--objective"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown objective 'speed' (known: bytes, latency, energy, edp)"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(bad));
}

// A compile's schedule.json compiles again through its explicit mappings (costed, checked, no
// search) to the same program and DRAM image; a mapping edited to say what the model does not
// build is refused naming the file, the group, the op and the key, before anything is written.
TEST(CompileCli, a_schedule_compiles_again_from_its_mappings_to_the_same_program) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_mapping";
  const fs::path again = fs::path(testing::TempDir()) / "codegen_cli_mapping_again";
  fs::remove_all(dir);
  fs::remove_all(again);
  ASSERT_EQ(run({"compile", "--model", "tiny_residual", "--hw", "edge-small", "--policy", "optimal",
                 "--objective", "latency", "--out", dir.string()}),
            0);
  ASSERT_EQ(run({"compile", "--model", "tiny_residual", "--hw", "edge-small", "--schedule",
                 (dir / "schedule.json").string(), "--out", again.string()}),
            0);
  const auto bytes = [](const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const char* file : {"program.bin", "dram.bin"})
    EXPECT_EQ(bytes(dir / file), bytes(again / file)) << file;
  std::ifstream schedule_in(again / "schedule.json");
  auto schedule = nlohmann::json::parse(schedule_in);
  EXPECT_EQ(schedule["policy"], "optimal");
  EXPECT_EQ(schedule["objective"], "latency");

  auto& residency = schedule["groups"][0]["mapping"]["ops"][0]["operands"][0]["residency"];
  const std::string wrong = residency == "kept" ? "cached" : "kept";
  residency = wrong;
  const fs::path edited = fs::path(testing::TempDir()) / "codegen_cli_mapping_edited.json";
  std::ofstream(edited) << schedule.dump();
  const fs::path bad = fs::path(testing::TempDir()) / "codegen_cli_mapping_bad";
  fs::remove_all(bad);
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"compile", "--model", "tiny_residual", "--hw", "edge-small", "--schedule",
                 edited.string(), "--out", bad.string()}),
            1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(edited.string() + ": group 0: mapping.ops[0] ('"), std::string::npos) << err;
  EXPECT_NE(err.find("').operands[0].residency: written '" + wrong + "', the model gives '"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(bad));
}

// 2D tiles are the default map space; --no-2d-tiles restores rows-then-columns. schedule.json
// records which one was searched (map_space.column_tiles_every_row).
TEST(CompileCli, the_2d_tile_default_and_its_off_switch_are_recorded) {
  for (const bool off : {false, true}) {
    const fs::path dir =
        fs::path(testing::TempDir()) / (off ? "codegen_cli_no_2d" : "codegen_cli_2d");
    fs::remove_all(dir);
    std::vector<std::string> args = {"compile", "--model",    "tiny_residual",
                                     "--hw",    "edge-small", "--policy",
                                     "optimal", "--out",      dir.string()};
    if (off) args.push_back("--no-2d-tiles");
    ASSERT_EQ(run(args), 0);
    std::ifstream schedule_in(dir / "schedule.json");
    const auto schedule = nlohmann::json::parse(schedule_in);
    EXPECT_EQ(schedule["map_space"]["column_tiles_every_row"], !off);
  }
}

// Files are written under a temporary name and renamed into place: when one cannot be written,
// the compile fails naming it and leaves no partial file behind.
TEST(CompileCli, a_file_that_cannot_be_written_is_named_and_leaves_no_partial_file) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_unwritable";
  fs::remove_all(dir);
  const std::vector<std::string> args = {"compile",   "--model",    "tiny_conv",
                                         "--hw",      "edge-small", "--policy",
                                         "layerwise", "--out",      dir.string()};
  ASSERT_EQ(run(args), 0);
  const auto size_of = [&](const char* file) { return fs::file_size(dir / file); };
  const auto program_bytes = size_of("program.bin");
  const auto schedule_bytes = size_of("schedule.json");
  // A folder where schedule.json should go: the rename over it fails.
  fs::remove(dir / "schedule.json");
  fs::create_directory(dir / "schedule.json");
  fs::create_directory(dir / "schedule.json" / "keep");
  testing::internal::CaptureStderr();
  EXPECT_EQ(run(args), 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find((dir / "schedule.json").string() +
                     ": error: is a directory; refusing to write over it"),
            std::string::npos)
      << err;
  EXPECT_EQ(size_of("program.bin"), program_bytes);      // rewritten whole, same bytes
  for (const auto& entry : fs::directory_iterator(dir))  // no temporary left behind
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  EXPECT_TRUE(fs::is_directory(dir / "schedule.json" / "keep"));
  EXPECT_GT(schedule_bytes, 0u);
  // compile.json, the completion marker, went first: the folder is recognisably incomplete.
  EXPECT_FALSE(fs::exists(dir / "compile.json"));
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"sim", dir.string()}), 1);
  const std::string sim_err = testing::internal::GetCapturedStderr();
  EXPECT_NE(sim_err.find((dir / "compile.json").string() +
                         ": error: missing: the folder is an incomplete compile"),
            std::string::npos)
      << sim_err;
}

// Issue 41: a compile killed while writing left a new program.bin beside an old dram.bin and
// compile.json, and `tessel sim` ran the mix. compile.json lists every file's size and hash.
TEST(CompileCli, a_folder_mixing_two_compiles_is_refused_naming_the_file) {
  const fs::path a = fs::path(testing::TempDir()) / "codegen_cli_mix_a";
  const fs::path b = fs::path(testing::TempDir()) / "codegen_cli_mix_b";
  fs::remove_all(a);
  fs::remove_all(b);
  ASSERT_EQ(run({"compile", "--model", "tiny_conv", "--hw", "edge-small", "--policy", "layerwise",
                 "--out", a.string()}),
            0);
  ASSERT_EQ(run({"compile", "--model", "tiny_residual", "--hw", "edge-small", "--policy",
                 "layerwise", "--out", b.string()}),
            0);
  std::ifstream in(a / "compile.json");
  const auto listed = nlohmann::json::parse(in)["files"];
  for (const char* file : {"program.bin", "program.tasm", "dram.bin", "schedule.json", "hw.yaml"})
    EXPECT_EQ(listed[file]["bytes"].get<std::uintmax_t>(), fs::file_size(a / file)) << file;
  fs::copy_file(b / "program.bin", a / "program.bin", fs::copy_options::overwrite_existing);
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"sim", a.string()}), 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find((a / "program.bin").string() + ": error: does not match compile.json ("),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(a / "report.json"));
}

}  // namespace
}  // namespace tessel

// The Slurm backend: one array task per shard of points, shard files merged by `sweep collect`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "experiments/sweep/spec.hpp"
#include "support/result.hpp"

namespace tessel::sweep {

/// Where and how an array job runs. Layout of `dir`:
///   sweep.json (manifest: spec path, shard count), sweep.sbatch (the array script),
///   shard-I.jsonl (shard I's results, written by `tessel sweep --shard I/N`), logs/shard-I.log.
struct SlurmOptions {
  std::filesystem::path dir;
  std::size_t shards = 1;        ///< array size; shard I holds points with index % N == I
  std::filesystem::path tessel;  ///< the tessel executable the tasks run (absolute)
  unsigned cpus_per_task = 1;    ///< -j of each task and its --cpus-per-task
  std::vector<std::string> sbatch_options;  ///< extra `#SBATCH` options, e.g. "--partition=debug"
  bool dry_run = false;                     ///< write the script, do not call sbatch
};

/// How far one shard got.
struct ShardState {
  std::size_t index = 0;
  std::size_t expected = 0;  ///< points of the spec in this shard
  std::size_t done = 0;      ///< of those, lines present in shard-I.jsonl
  bool file_exists = false;
  bool complete() const { return done == expected; }
};

/// The state of every shard of `spec` under `dir`, reading shard files as they are.
Result<std::vector<ShardState>> shard_states(const SweepSpec& spec,
                                             const std::filesystem::path& dir, std::size_t shards);

/// The sbatch array script for the given shard indices (text only; see write/submit below).
std::string array_script(const SweepSpec& spec, const SlurmOptions& options,
                         const std::vector<std::size_t>& shard_indices);

struct SubmitReport {
  std::vector<std::size_t> submitted_shards;  ///< empty when every shard was already complete
  std::filesystem::path script;
  std::string job_id;  ///< sbatch's job id; empty on a dry run or when nothing was submitted
};

/// Writes the manifest and an array script covering the shards that are not complete, and
/// (unless dry_run) submits it with `sbatch --parsable`. A rerun therefore resubmits only missing
/// or failed shards. Fails when `dir` holds a manifest of another spec or shard count, or when
/// sbatch fails (its output is in the message).
Result<SubmitReport> submit_slurm(const SweepSpec& spec, const SlurmOptions& options);

struct CollectReport {
  std::size_t points = 0;              ///< points of the spec
  std::size_t merged = 0;              ///< lines written to the merged file
  std::vector<ShardState> incomplete;  ///< missing or partial shards (rerun the submit for them)
};

/// Merges the shards under `dir` (whose manifest names the spec) into `out`, one line per
/// point, in point order, each point once; `out` is replaced atomically (write + rename).
/// Writes what there is even when shards are incomplete; the report lists them.
Result<CollectReport> collect_shards(const std::filesystem::path& dir,
                                     const std::filesystem::path& out);

}  // namespace tessel::sweep

// Classification of Yosys cell counts and the resources.json reader and writer.
#include "hw/fpga/resources.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

namespace tessel::fpga {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kSchema = "tessel.fpga.resources/2";

/// LUTs per distributed-RAM / SRL primitive (UG474, 7-series CLB user guide).
const std::map<std::string, std::int64_t, std::less<>> kLutsPerMemoryCell = {
    {"RAM16X1S", 1}, {"RAM32X1S", 1}, {"RAM64X1S", 1}, {"RAM128X1S", 2}, {"RAM256X1S", 4},
    {"RAM16X1D", 2}, {"RAM32X1D", 2}, {"RAM64X1D", 2}, {"RAM128X1D", 4}, {"RAM32M", 4},
    {"RAM64M", 4},   {"SRL16E", 1},   {"SRLC16E", 1},  {"SRLC32E", 1}};

/// Adds `count` cells of `type` to the group it belongs to; false when it belongs to none.
bool classify(const std::string& type, std::int64_t count, ResourceCounts& counts) {
  if ((type.size() == 4 && type.rfind("LUT", 0) == 0 && type[3] >= '1' && type[3] <= '6') ||
      type == "INV") {
    counts.lut += count;
  } else if (const auto memory = kLutsPerMemoryCell.find(type);
             memory != kLutsPerMemoryCell.end()) {
    counts.lut_as_memory += count * memory->second;
  } else if (type == "FDRE" || type == "FDSE" || type == "FDCE" || type == "FDPE") {
    counts.ff += count;
  } else if (type == "LDCE" || type == "LDPE") {
    counts.latch += count;
  } else if (type == "RAMB18E1") {
    counts.bram18 += count;
  } else if (type == "RAMB36E1") {
    counts.bram36 += count;
  } else if (type == "DSP48E1") {
    counts.dsp += count;
  } else if (type == "CARRY4") {
    counts.carry += count;
  } else if (type == "MUXF7" || type == "MUXF8") {
    counts.muxf += count;
  } else if (type == "IBUF" || type == "OBUF" || type == "IOBUF" || type == "OBUFT" ||
             type == "IBUFDS" || type == "OBUFDS") {
    counts.io += count;
  } else if (type == "BUFG" || type == "BUFGCTRL" || type == "BUFH") {
    counts.clock_buffers += count;
  } else {
    return false;
  }
  return true;
}

Json counts_json(const std::map<std::string, std::int64_t>& cells) {
  Json out = Json::object();
  for (const auto& [type, count] : cells) out[type] = count;
  return out;
}

/// `c` as JSON, each count under its name and the derived RAMB36 equivalent after bram36.
void put_counts(Json& out, const ResourceCounts& c) {
  for (const CountField& f : kCountFields) {
    out[f.name] = c.*f.field;
    if (std::string_view(f.name) == "bram36") out["bram36_equivalent"] = c.bram36_equivalent();
  }
}

/// Reads every count of `in` into `c`; `key` names the value being read (`at` + its name).
void parse_counts(const Json& in, const std::string& at, ResourceCounts& c, std::string& key) {
  for (const CountField& f : kCountFields) {
    key = at + f.name;
    c.*f.field = in.at(f.name).get<std::int64_t>();
    if (c.*f.field < 0) throw std::out_of_range("negative");
  }
}

Json unit_json(const UnitCost& u) {
  Json out = {{"name", u.name}, {"module", u.module}, {"instances", u.instances}};
  put_counts(out, u.counts);
  out["note"] = u.note;
  return out;
}

/// Reads one "units" row back; `key` names the value being read (for the caller's message).
UnitCost parse_unit(const Json& e, const std::string& at, std::string& key) {
  UnitCost u;
  key = at + "name";
  u.name = e.at("name").get<std::string>();
  key = at + "module";
  u.module = e.at("module").get<std::string>();
  key = at + "note";
  u.note = e.at("note").get<std::string>();
  key = at + "instances";
  u.instances = e.at("instances").get<std::int64_t>();
  if (u.instances < 0) throw std::out_of_range("negative");
  parse_counts(e, at, u.counts, key);
  return u;
}

Json scratchpad_bram_json(const ScratchpadBramMap& map) {
  Json list = Json::array();
  for (const ScratchpadBram& s : map.scratchpads) {
    list.push_back({{"name", s.name},
                    {"size_bytes", s.size_bytes},
                    {"banks", s.banks},
                    {"port_width_bytes", s.port_width_bytes},
                    {"bank_depth_words", s.bank_depth_words},
                    {"bank_width_bits", s.bank_width_bits},
                    {"primitive", s.shape.primitive},
                    {"shape", s.shape.name()},
                    {"primitives_per_bank", s.primitives_per_bank},
                    {"bram18", s.bram18},
                    {"bram36", s.bram36},
                    {"bram36_equivalent", s.bram36_equivalent()},
                    {"bit_efficiency", s.bit_efficiency}});
  }
  return {{"method", "analytic: not synthesised (hw/fpga/bram_map.hpp)"},
          {"port_assumption", kBramPortAssumption},
          {"bram18", map.bram18},
          {"bram36", map.bram36},
          {"bram36_equivalent", map.bram36_equivalent()},
          {"scratchpads", list}};
}

/// Reads scratchpad_bram back; `key` names the value being read (for the caller's message).
ScratchpadBramMap parse_scratchpad_bram(const Json& in, std::string& key) {
  ScratchpadBramMap map;
  key = "scratchpad_bram.bram18";
  map.bram18 = in.at("bram18").get<std::int64_t>();
  key = "scratchpad_bram.bram36";
  map.bram36 = in.at("bram36").get<std::int64_t>();
  if (map.bram18 < 0 || map.bram36 < 0) throw std::out_of_range("negative");
  const Json& list = in.at("scratchpads");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& e = list.at(i);
    const std::string at = "scratchpad_bram.scratchpads[" + std::to_string(i) + "].";
    ScratchpadBram s;
    key = at + "name";
    s.name = e.at("name").get<std::string>();
    key = at + "size_bytes";
    s.size_bytes = e.at("size_bytes").get<std::int64_t>();
    key = at + "banks";
    s.banks = e.at("banks").get<int>();
    key = at + "port_width_bytes";
    s.port_width_bytes = e.at("port_width_bytes").get<int>();
    key = at + "bank_depth_words";
    s.bank_depth_words = e.at("bank_depth_words").get<std::int64_t>();
    key = at + "bank_width_bits";
    s.bank_width_bits = e.at("bank_width_bits").get<int>();
    key = at + "shape";
    const auto primitive = e.at("primitive").get<std::string>();
    const auto shape = e.at("shape").get<std::string>();
    bool found = false;
    for (const BramShape& candidate : bram_shapes()) {
      if (candidate.primitive == primitive && candidate.name() == shape) {
        s.shape = candidate;
        found = true;
      }
    }
    if (!found) throw std::out_of_range("unknown shape");
    key = at + "primitives_per_bank";
    s.primitives_per_bank = e.at("primitives_per_bank").get<std::int64_t>();
    key = at + "bram18";
    s.bram18 = e.at("bram18").get<std::int64_t>();
    key = at + "bram36";
    s.bram36 = e.at("bram36").get<std::int64_t>();
    key = at + "bit_efficiency";
    s.bit_efficiency = e.at("bit_efficiency").get<double>();
    map.scratchpads.push_back(s);
  }
  return map;
}

}  // namespace

ResourceCounts classify_cells(const std::map<std::string, std::int64_t>& cells) {
  ResourceCounts counts;
  for (const auto& [type, n] : cells) {
    counts.cells_by_type[type] = n;
    if (!classify(type, n, counts)) counts.unclassified[type] = n;
  }
  return counts;
}

Result<std::pair<ResourceCounts, std::string>> counts_from_yosys_stat(
    std::string_view json_text, const std::string& file_label) {
  Json stat;
  try {
    stat = Json::parse(json_text);
  } catch (const Json::exception& error) {
    return fail(file_label + ": not JSON (" + error.what() + ")");
  }
  const Json* by_type = nullptr;
  if (stat.contains("design") && stat["design"].contains("num_cells_by_type")) {
    by_type = &stat["design"]["num_cells_by_type"];
  } else if (stat.contains("modules") && stat["modules"].is_object() &&
             stat["modules"].size() == 1 &&
             stat["modules"].begin()->contains("num_cells_by_type")) {
    by_type = &(*stat["modules"].begin())["num_cells_by_type"];
  }
  if (by_type == nullptr || !by_type->is_object()) {
    return fail(file_label +
                ": no design.num_cells_by_type (not the output of Yosys `stat -json`?)");
  }
  ResourceCounts counts;
  for (const auto& [type, count] : by_type->items()) {
    if (!count.is_number_integer() || count.get<std::int64_t>() < 0) {
      return fail(file_label + ": num_cells_by_type." + type + " is not a count");
    }
    const auto n = count.get<std::int64_t>();
    counts.cells_by_type[type] = n;
    if (!classify(type, n, counts)) counts.unclassified[type] = n;
  }
  const std::string tool = stat.value("creator", std::string("Yosys (version unknown)"));
  return std::pair{counts, tool};
}

std::string to_json(const FpgaResources& r) {
  Json out;
  out["schema"] = kSchema;
  out["config"] = {{"name", r.config_name}, {"hash", r.config_hash}};
  out["target"] = {
      {"part", r.part}, {"family", r.yosys_family}, {"top", r.top}, {"clock_mhz", r.clock_mhz}};
  out["tool"] = r.tool;
  out["tessel_version"] = r.tessel_version;
  out["synth_seconds"] = r.synth_seconds;
  out["resources"] = Json::object();
  put_counts(out["resources"], r.counts);
  out["black_boxes"] = r.black_boxes;
  out["scratchpad_bram"] = r.scratchpad_bram ? scratchpad_bram_json(*r.scratchpad_bram) : Json();
  out["bram36_equivalent_total"] = r.bram36_equivalent_total();
  out["fmax_mhz"] = r.fmax_mhz ? Json(*r.fmax_mhz) : Json(nullptr);
  out["fmax_reason"] = r.fmax_reason;
  Json units = Json::array();
  for (const UnitCost& u : r.units) units.push_back(unit_json(u));
  out["units_method"] = r.units.empty() ? "" : std::string(kUnitsMethod);
  out["units"] = units;
  out["cells_by_type"] = counts_json(r.counts.cells_by_type);
  out["unclassified_cells"] = counts_json(r.counts.unclassified);
  return out.dump(2) + "\n";
}

Result<FpgaResources> parse_resources(std::string_view text, const std::string& file_label) {
  Json in;
  try {
    in = Json::parse(text);
  } catch (const Json::exception& error) {
    return fail(file_label + ": not JSON (" + error.what() + ")");
  }
  if (!in.is_object() || in.value("schema", std::string()) != kSchema) {
    return fail(file_label + ": schema: expected \"" + std::string(kSchema) + "\"");
  }
  FpgaResources r;
  // Each access names its key when the value is missing or of the wrong type.
  std::string key;
  try {
    key = "config.name";
    r.config_name = in.at("config").at("name").get<std::string>();
    key = "config.hash";
    r.config_hash = in.at("config").at("hash").get<std::string>();
    key = "target.part";
    r.part = in.at("target").at("part").get<std::string>();
    key = "target.family";
    r.yosys_family = in.at("target").at("family").get<std::string>();
    key = "target.top";
    r.top = in.at("target").at("top").get<std::string>();
    key = "target.clock_mhz";
    r.clock_mhz = in.at("target").at("clock_mhz").get<double>();
    key = "tool";
    r.tool = in.at("tool").get<std::string>();
    key = "tessel_version";
    r.tessel_version = in.at("tessel_version").get<std::string>();
    key = "synth_seconds";
    r.synth_seconds = in.at("synth_seconds").get<double>();
    parse_counts(in.at("resources"), "resources.", r.counts, key);
    key = "black_boxes";
    r.black_boxes = in.at("black_boxes").get<std::vector<std::string>>();
    key = "scratchpad_bram";
    if (!in.at("scratchpad_bram").is_null()) {
      r.scratchpad_bram = parse_scratchpad_bram(in.at("scratchpad_bram"), key);
    }
    // "units" (since session 29) is optional: files written before it have none.
    if (in.contains("units")) {
      key = "units";
      const Json& list = in.at("units");
      if (!list.is_array()) throw std::out_of_range("not a list");
      for (std::size_t i = 0; i < list.size(); ++i) {
        r.units.push_back(parse_unit(list.at(i), "units[" + std::to_string(i) + "].", key));
      }
    }
    key = "fmax_mhz";
    if (!in.at("fmax_mhz").is_null()) r.fmax_mhz = in.at("fmax_mhz").get<double>();
    key = "fmax_reason";
    r.fmax_reason = in.at("fmax_reason").get<std::string>();
    key = "cells_by_type";
    for (const auto& [type, n] : in.at("cells_by_type").items()) {
      r.counts.cells_by_type[type] = n.get<std::int64_t>();
    }
    key = "unclassified_cells";
    for (const auto& [type, n] : in.at("unclassified_cells").items()) {
      r.counts.unclassified[type] = n.get<std::int64_t>();
    }
  } catch (const std::exception&) {
    return fail(file_label + ": " + key + ": missing or not a valid value");
  }
  return r;
}

Result<FpgaResources> read_resources(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(path + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_resources(text.str(), path);
}

}  // namespace tessel::fpga

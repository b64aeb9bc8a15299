// The per-unit breakdown of a synthesised design from Yosys's hierarchical `stat` text.
#include "hw/fpga/unit_cost.hpp"

#include <set>
#include <sstream>

#include "support/strings.hpp"

namespace tessel::fpga {
namespace {

using Cells = std::map<std::string, std::int64_t>;

Result<Cells> flatten_cells(const ModuleCells& modules, const std::string& module,
                            std::set<std::string>& open) {
  const auto found = modules.find(module);
  if (found == modules.end()) return fail("module '" + module + "' is not in the netlist");
  if (!open.insert(module).second) return fail("module '" + module + "' instantiates itself");
  Cells out;
  for (const auto& [type, count] : found->second) {
    if (modules.contains(type)) {
      auto inner = flatten_cells(modules, type, open);
      if (!inner) return inner.failure();
      for (const auto& [t, n] : inner.value()) out[t] += n * count;
    } else {
      out[type] += count;
    }
  }
  open.erase(module);
  return out;
}

/// Instances of every module in the design below `module` (which counts `times`).
void count_instances(const ModuleCells& modules, const std::string& module, std::int64_t times,
                     std::map<std::string, std::int64_t>& instances) {
  instances[module] += times;
  for (const auto& [type, count] : modules.at(module)) {
    if (modules.contains(type) && type != module) {
      count_instances(modules, type, times * count, instances);
    }
  }
}

}  // namespace

Result<ModuleCells> parse_yosys_stat_text(std::string_view text, const std::string& file_label) {
  ModuleCells modules;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  std::map<std::string, std::int64_t>* current = nullptr;
  bool in_cells = false;
  while (std::getline(lines, line)) {
    ++number;
    const std::string t(trim(line));
    if (t.rfind("=== ", 0) == 0 && t.size() >= 8 && t.ends_with(" ===")) {
      const std::string name = t.substr(4, t.size() - 8);
      if (name == "design hierarchy") break;
      current = &modules[name];
      in_cells = false;
      continue;
    }
    if (current == nullptr) continue;
    if (t.rfind("Number of cells:", 0) == 0) {
      in_cells = true;
      continue;
    }
    // The cell lines follow "Number of cells:", indented further; anything else ends them.
    if (!in_cells) continue;
    if (t.empty() || t.rfind("Number of", 0) == 0 || t.rfind("Chip area", 0) == 0 ||
        t.rfind("Estimated", 0) == 0) {
      in_cells = false;
      continue;
    }
    const auto space = t.find_last_of(" \t");
    std::int64_t count = -1;
    if (space != std::string::npos) {
      try {
        std::size_t used = 0;
        count = std::stoll(t.substr(space + 1), &used);
        if (used != t.size() - space - 1) count = -1;
      } catch (const std::exception&) {
        count = -1;
      }
    }
    if (count < 0) {
      return fail(file_label + ":" + std::to_string(number) + ": not a cell count line: '" + t +
                  "'");
    }
    (*current)[std::string(trim(t.substr(0, space)))] += count;
  }
  if (modules.empty()) return fail(file_label + ": no module section (not Yosys `stat` text?)");
  return modules;
}

std::string module_base_name(const std::string& yosys_name) {
  if (yosys_name.rfind("$paramod", 0) != 0) return yosys_name;
  const auto first = yosys_name.find('\\');
  if (first == std::string::npos) return yosys_name;
  const auto second = yosys_name.find('\\', first + 1);
  return yosys_name.substr(first + 1,
                           second == std::string::npos ? std::string::npos : second - first - 1);
}

Result<Cells> hierarchical_cells(const ModuleCells& modules, const std::string& module) {
  std::set<std::string> open;
  return flatten_cells(modules, module, open);
}

Result<std::vector<UnitCost>> unit_costs(const ModuleCells& modules, const std::string& top,
                                         const std::vector<FpgaUnit>& units,
                                         const ResourceCounts& whole) {
  if (!modules.contains(top)) return fail("the top module '" + top + "' is not in the netlist");
  if (auto cycle_free = hierarchical_cells(modules, top); !cycle_free) {
    return cycle_free.failure();
  }
  std::map<std::string, std::int64_t> instances;
  count_instances(modules, top, 1, instances);
  std::vector<UnitCost> rows;
  ResourceCounts rest = whole;
  for (const FpgaUnit& unit : units) {
    UnitCost row{unit.name, unit.module, 0, {}, unit.note};
    Cells cells;
    for (const auto& [name, own] : modules) {
      if (module_base_name(name) != unit.module || !instances.contains(name)) continue;
      std::map<std::string, std::int64_t> below;  // every module under this one, at any depth
      count_instances(modules, name, 1, below);
      for (const auto& [inner, count] : below) {
        if (inner == name) continue;
        for (const FpgaUnit& other : units) {
          if (module_base_name(inner) == other.module) {
            return fail("unit '" + unit.name + "' (" + unit.module + ") instantiates unit '" +
                        other.name + "' (" + other.module + "): its cells would count twice");
          }
        }
      }
      const std::int64_t n = instances.at(name);
      row.instances += n;
      auto inner = hierarchical_cells(modules, name);
      if (!inner) return inner.failure();
      for (const auto& [type, count] : inner.value()) cells[type] += count * n;
    }
    row.counts = classify_cells(cells);
    row.counts.cells_by_type.clear();  // the rows carry the grouped counts only
    row.counts.unclassified.clear();
    for (const CountField& f : kCountFields) {
      rest.*f.field -= row.counts.*f.field;
      if (rest.*f.field < 0) {
        return fail("the units hold more " + std::string(f.name) + " than the whole design (" +
                    std::to_string(whole.*f.field) + ")");
      }
    }
    rows.push_back(std::move(row));
  }
  rest.cells_by_type.clear();
  rest.unclassified.clear();
  rows.push_back({std::string(kOtherUnit), "", 1, rest, "the design's cells in none of the units"});
  return rows;
}

}  // namespace tessel::fpga

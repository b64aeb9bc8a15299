// The documents of a YAML text, loaded without yaml-cpp 0.7's endless loop.
//
// yaml-cpp 0.7 (Debian's) never consumes a ',' that stands outside a flow collection at the top
// of a document ("," or "{a: 1},"): YAML::LoadAll then yields empty documents at that token
// forever, growing without bound (the config fuzzer found it; CI hung on it). Every loader of a
// multi-document YAML text goes through load_yaml_documents, which walks the text's events
// first and refuses such a text, located at the token, before LoadAll sees it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostic.hpp"
#include "support/result.hpp"

namespace tessel {

/// The result of loading a YAML text: its documents, or the one located diagnostic that says why
/// it is not YAML (yaml-cpp's own parse errors, and the stuck token above).
struct YamlDocuments {
  std::vector<YAML::Node> documents;
  std::vector<Diagnostic> errors;  ///< empty on success; else one entry, located in `label`
  bool ok() const { return errors.empty(); }
};

/// Loads every document of `text` (as YAML::LoadAll does); `label` names the file in errors.
YamlDocuments load_yaml_documents(std::string_view text, const std::string& label);

/// The one document of `text`: a second, non-empty document is refused (it would be silently
/// ignored), located at its start; `what` names the file kind in that message ("a config file").
YamlDocuments load_one_yaml_document(std::string_view text, const std::string& label,
                                     std::string_view what);

}  // namespace tessel

#include "configs/yaml_documents.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <sstream>

namespace tessel {
namespace {

SourceLocation located(const std::string& label, const YAML::Mark& mark) {
  if (mark.is_null()) return {label, 0, 0};
  return {label, mark.line + 1, mark.column + 1};
}

/// Sees only where each document starts; a document that starts where the one before it started
/// consumed nothing, which is yaml-cpp's stuck state.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  std::vector<YAML::Mark> starts;
};

bool same_place(const YAML::Mark& a, const YAML::Mark& b) {
  return a.pos == b.pos && a.line == b.line && a.column == b.column;
}

}  // namespace

YamlDocuments load_yaml_documents(std::string_view text, const std::string& label) {
  YamlDocuments result;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    DocumentStarts starts;
    while (parser.HandleNextDocument(starts)) {
      const std::size_t n = starts.starts.size();
      if (n >= 2 && same_place(starts.starts[n - 1], starts.starts[n - 2])) {
        const YAML::Mark& mark = starts.starts[n - 1];
        const bool in_text = mark.pos >= 0 && static_cast<std::size_t>(mark.pos) < text.size();
        const std::string token = in_text ? std::string(1, text[mark.pos]) : "token";
        result.errors.push_back({located(label, mark), "",
                                 "invalid YAML: unexpected '" + token +
                                     "' here (a ',' separates items only inside '[ ]' or '{ }')"});
        return result;
      }
    }
    result.documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    result.errors.push_back({located(label, e.mark), "", "invalid YAML: " + e.msg});
  }
  return result;
}

YamlDocuments load_one_yaml_document(std::string_view text, const std::string& label,
                                     std::string_view what) {
  YamlDocuments result = load_yaml_documents(text, label);
  if (!result.ok()) return result;
  for (std::size_t d = 1; d < result.documents.size(); ++d) {
    if (result.documents[d].IsNull()) continue;  // a trailing '---' with nothing after it
    result.errors.push_back(
        {located(label, result.documents[d].Mark()), "",
         "a second YAML document; " + std::string(what) + " holds exactly one"});
    result.documents.clear();
    return result;
  }
  result.documents.resize(std::min<std::size_t>(result.documents.size(), 1));
  return result;
}

}  // namespace tessel

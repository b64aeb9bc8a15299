# Sourced by run-fuzzers.sh and run-onnx-fuzzer.sh: fuzz_unity_object OBJECT SOURCE... compiles
# the library sources a fuzzer links as one translation unit (a file that #includes each, in
# order) with the caller's `flags` and `cxx`, into OBJECT. Measured (session 46, clang 14, -O1
# with ASan, UBSan and fuzzer coverage): the ONNX importer's 18 sources 185 CPU-s one by one,
# 58 as one unit (each of them parses the protobuf-generated ONNX headers); the ISA, config and
# .npy readers' 15 sources 63 and 45. A source whose file-local names collide with another's
# fails here by name: give the helper a namespace of its own (as docs/CONTRIBUTING.md asks of
# the unity-built test sources).
fuzz_unity_object() {
  local object=$1
  shift
  local unit="${object%.o}.cpp"
  : > "$unit"
  local source
  for source in "$@"; do echo "#include \"$root/$source\"" >> "$unit"; done
  "$cxx" "${flags[@]}" -c "$unit" -o "$object"
}

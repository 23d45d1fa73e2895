#pragma once
#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver (compiler-rt, -sanitize=fuzzer): runs the fuzzing loop on `callback` with
// libFuzzer's command-line flags. The fuzz targets call it from their own `main`, because SwiftPM
// renames an executable's entry point and libFuzzer's `main` is then never linked.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

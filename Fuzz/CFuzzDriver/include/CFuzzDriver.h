// libFuzzer's entry for programs that own main(): SwiftPM renames an executable's main (barscope_fuzz_main), so the
// fuzz target starts libFuzzer itself. Defined by libclang_rt.fuzzer when built with -sanitize=fuzzer; only
// referenced then.
#ifndef CFUZZDRIVER_H
#define CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif

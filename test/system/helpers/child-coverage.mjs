// Preloaded into a system test file's process by test/kinds.mjs under c8: the file's own process
// runs without V8's coverage, and the processes it starts (the service, its CLI, workers) collect
// theirs into c8's directory, which they inherit from this environment.
if (process.env.ANIMAL_STORE_CHILD_COVERAGE) {
  process.env.NODE_V8_COVERAGE = process.env.ANIMAL_STORE_CHILD_COVERAGE
  delete process.env.ANIMAL_STORE_CHILD_COVERAGE
}

/**
 * The bound of a server process's JavaScript heap (MAX_HEAP_MB). V8 sizes its heap when a process
 * starts and lets it grow far beyond the live set while the machine has memory (a flood of keyless
 * addresses took a process with a bounded live set to 300 MB of RSS), so the bound is a flag of
 * the process: the launcher of `npm start` (bin/npm-start.mjs) and the primary of `serve --workers
 * N` give it to the processes they start; a process started otherwise takes node's own flag.
 */
export function heapBoundFlags(maxHeapMb: number | undefined): string[] {
  return maxHeapMb === undefined ? [] : [`--max-old-space-size=${maxHeapMb}`]
}

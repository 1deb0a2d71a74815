/* soak.h - `mcpgw-bench soak`: one long run through the gateway at a
 * steady rate, a replica SIGKILLed and replaced every interval, the
 * gateway's RSS and open descriptors and the load client's counts
 * sampled throughout; the verdict on memory and descriptor growth and on
 * the calls lost (doc/bench.md, "Soak"). */
#ifndef MGW_BENCH_SOAK_H
#define MGW_BENCH_SOAK_H

/* argv is the whole command line (argv[1] is "soak").  Returns the
 * process exit status: 0 every target met, 1 a target missed (or the
 * run could not be measured, or was interrupted), 2 usage error. */
int mgw_bench_soak_main(int argc, char **argv);

#endif

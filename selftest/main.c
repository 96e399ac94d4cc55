/* convnd-selftest: is every configuration right on this device? (selftest.h, docs/errata.md)
 *
 *   convnd-selftest [--quick | --full] [--only LIST] [--errata PATH | --no-errata]
 *                   [--device gpu|emulated] [--seed N] [--quiet]
 *
 * Exit status: 0 when every case passed, 1 when one failed (written to the errata), 2 on an
 * error (bad arguments, an errata file that cannot be written). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "selftest.h"

static void usage(FILE *f) {
    fprintf(f, "usage: convnd-selftest [options]\n"
               "  --quick          one case per configuration\n"
               "  --full           every case each configuration supports\n"
               "                   (default: one case per mode x dtype x layout x view class)\n"
               "  --only LIST      only these schedules or schedule:configs (comma-separated)\n"
               "  --errata PATH    append failures to PATH (default: the errata file the planner\n"
               "                   reads: $CONVND_ERRATA, else ~/.cache/convnd/errata)\n"
               "  --no-errata      write no errata\n"
               "  --device gpu|emulated  (default: the GPU when there is one)\n"
               "  --seed N         data seed (default: a fresh one)\n"
               "  --quiet          no progress line on stderr\n");
}

int main(int argc, char **argv) {
    selftest_options o;
    memset(&o, 0, sizeof o);
    o.level = SELFTEST_DEFAULT;
    o.seed = (uint64_t)time(NULL);
    o.progress = stderr;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o.level = SELFTEST_QUICK;
        } else if (!strcmp(a, "--full")) {
            o.level = SELFTEST_FULL;
        } else if (!strcmp(a, "--only") && next) {
            o.only = argv[++i];
        } else if (!strcmp(a, "--errata") && next) {
            o.errata = argv[++i];
        } else if (!strcmp(a, "--no-errata")) {
            o.no_errata = 1;
        } else if (!strcmp(a, "--seed") && next) {
            o.seed = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--quiet")) {
            o.progress = NULL;
        } else if (!strcmp(a, "--device") && next) {
            const char *d = argv[++i];
            const convnd_device dev = !strcmp(d, "gpu")        ? CONVND_DEVICE_GPU
                                      : !strcmp(d, "emulated") ? CONVND_DEVICE_EMULATED
                                                               : CONVND_DEVICE_AUTO;
            if (dev == CONVND_DEVICE_AUTO) {
                fprintf(stderr, "convnd-selftest: --device %s: expected gpu or emulated\n", d);
                return 2;
            }
            if (convnd_set_device(dev) != CONVND_OK) {
                fprintf(stderr, "convnd-selftest: %s\n", convnd_last_error());
                return 2;
            }
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "convnd-selftest: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    printf("convnd-selftest: seed %llu\n", (unsigned long long)o.seed);
    selftest_summary s;
    const convnd_status st = selftest_run(&o, &s);
    if (st != CONVND_OK) {
        fprintf(stderr, "convnd-selftest: %s\n", convnd_last_error());
        return 2;
    }
    return s.failed ? 1 : 0;
}

/* Which schedules run on which GPU architecture (schedules/arch.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "device_services.h"
#include "errata.h"
#include "refuse.h"
#include "views_support.h"

#ifndef CONVND_CUDA_ARCHS
#define CONVND_CUDA_ARCHS "" /* built without CUDA: only the emulated device runs kernels */
#endif

const char *convnd_built_cuda_archs(void) {
    return CONVND_CUDA_ARCHS;
}

const char *convnd_default_cuda_archs(void) {
    return CONVND_DEFAULT_CUDA_ARCHS;
}

int32_t convnd_device_sm(void) {
    const convnd_device d = convnd_active_device();
    if (d != CONVND_DEVICE_GPU) return 0;
    const convnd_device_props *props = convnd_device_properties(d);
    return props->cc_major * 10 + props->cc_minor;
}

int32_t convnd_device_sm_count(void) {
    const int32_t sms = convnd_device_properties(convnd_active_device())->sm_count;
    return sms > 0 ? sms : 1;
}

int32_t convnd_build_runs_on(const char *cuda_archs, int32_t sm, char *reason, size_t reason_len) {
    const char *at = cuda_archs ? cuda_archs : "";
    while (*at) {
        const size_t len = strcspn(at, ",;");
        char entry[32];
        if (len > 0 && len < sizeof entry) {
            memcpy(entry, at, len);
            entry[len] = '\0';
            char *end = NULL;
            const long arch = strtol(entry, &end, 10);
            /* "NN": SASS and PTX; "NN-real": SASS only; "NN-virtual": PTX only */
            const int sass = strcmp(end, "-virtual") != 0, ptx = strcmp(end, "-real") != 0;
            if (end != entry && arch > 0) {
                if (sass && arch / 10 == sm / 10 && arch % 10 <= sm % 10) return 1;
                if (ptx && arch <= sm) return 1;
            }
        }
        at += len;
        if (*at == ',' || *at == ';') ++at;
    }
    return convnd_refuse(reason, reason_len,
                         "this build carries no code for sm_%d (CMAKE_CUDA_ARCHITECTURES=\"%s\"; "
                         "rebuild with %d in the list)",
                         (int)sm, cuda_archs ? cuda_archs : "", (int)sm);
}

int32_t convnd_schedule_arch_ok(const convnd_schedule *s, int32_t sm, const char *cuda_archs,
                                char *reason, size_t reason_len) {
    if (sm == 0) return 1; /* the emulated device runs every kernel */
    if (sm < s->min_sm)
        return convnd_refuse(reason, reason_len,
                             "schedule '%s' runs on sm_%d and newer (%s); this GPU is sm_%d",
                             s->name, (int)s->min_sm, s->arch_needs, (int)sm);
    char why[256];
    if (!convnd_build_runs_on(cuda_archs, sm, why, sizeof why))
        return convnd_refuse(reason, reason_len, "schedule '%s': %s", s->name, why);
    return 1;
}

int32_t convnd_schedule_supports_here(const convnd_schedule *s, const convnd_problem *p,
                                      const convnd_conv_params *params, int32_t config,
                                      char *reason, size_t reason_len) {
    if (!convnd_schedule_arch_ok(s, convnd_device_sm(), CONVND_CUDA_ARCHS, reason, reason_len) ||
        !convnd_schedule_reads_ok(s, p, params, reason, reason_len))
        return 0;
    /* after the schedule's own verdict, so that an excluded configuration that would not run p
     * anyway says why it would not */
    if (!s->supports(params, config, reason, reason_len)) return 0;
    return !convnd_errata_excludes(s, config, p, reason, reason_len);
}

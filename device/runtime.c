/* The device half of the public API: which device runs the kernels (a real GPU, or the emulated
 * device on the CPU), and memory on it.
 *
 * The choice is made lazily, at the first call that needs it, never at load time: Criterion
 * forks each test, and CUDA state created before a fork is unusable in the child. Order of
 * precedence: convnd_set_device(), then CONVND_DEVICE=gpu|emulated|auto, then AUTO (the GPU
 * when convnd was built with CUDA and cudaGetDeviceCount finds one, else emulated). */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "device_services.h"
#include "error.h"

#ifdef CONVND_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static int device_resolved; /* read with acquire; written under device_lock */
static convnd_device device_value = CONVND_DEVICE_EMULATED;
/* Set when the GPU was asked for through CONVND_DEVICE but cannot be used: every memory call
 * then fails with this explanation rather than silently using the CPU. */
static char device_problem[256];
static char device_name_text[320] = "emulated CUDA device (CPU)";
/* convnd_set_thread_device: 0 when this thread follows the process-wide choice. */
static _Thread_local convnd_device thread_device;

#ifdef CONVND_HAVE_CUDA
static convnd_status cuda_failed(cudaError_t e, const char *call) {
    return convnd_error(CONVND_ERR_DEVICE, "%s failed: %s (%s)", call, cudaGetErrorString(e),
                        cudaGetErrorName(e));
}
#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        const cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) return cuda_failed(e_, #call);                                      \
    } while (0)
#endif

/* Number of usable GPUs; why there is none in `why`. */
static int gpu_count(char *why, size_t why_len) {
#ifdef CONVND_HAVE_CUDA
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, why_len, "cudaGetDeviceCount failed: %s", cudaGetErrorString(e));
        (void)cudaGetLastError();
        return 0;
    }
    if (n <= 0) snprintf(why, why_len, "no CUDA device is present");
    return n;
#else
    snprintf(why, why_len, "convnd was built without CUDA");
    return 0;
#endif
}

static void use_emulated(void) {
    device_value = CONVND_DEVICE_EMULATED;
    device_problem[0] = '\0';
    snprintf(device_name_text, sizeof device_name_text, "emulated CUDA device (CPU)");
}

static void use_gpu(void) {
    device_value = CONVND_DEVICE_GPU;
    device_problem[0] = '\0';
#ifdef CONVND_HAVE_CUDA
    int dev = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        snprintf(device_name_text, sizeof device_name_text, "%s (GPU %d, sm_%d%d)", prop.name, dev,
                 prop.major, prop.minor);
    else
        snprintf(device_name_text, sizeof device_name_text, "CUDA GPU");
    (void)cudaGetLastError();
#endif
}

/* Caller holds device_lock. */
static convnd_status select_locked(convnd_device want, const char *source) {
    char why[200] = "";
    switch (want) {
    case CONVND_DEVICE_EMULATED:
        use_emulated();
        break;
    case CONVND_DEVICE_GPU:
        if (gpu_count(why, sizeof why) <= 0)
            return convnd_error(CONVND_ERR_DEVICE, "%s asks for the GPU, but %s", source, why);
        use_gpu();
        break;
    case CONVND_DEVICE_AUTO:
        if (gpu_count(why, sizeof why) > 0)
            use_gpu();
        else
            use_emulated();
        break;
    default:
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "device=%d: expected CONVND_DEVICE_AUTO (0), _GPU (1) or _EMULATED (2)",
                            (int)want);
    }
    __atomic_store_n(&device_resolved, 1, __ATOMIC_RELEASE);
    return CONVND_OK;
}

static void resolve(void) {
    if (__atomic_load_n(&device_resolved, __ATOMIC_ACQUIRE)) return;
    pthread_mutex_lock(&device_lock);
    if (!device_resolved) {
        const char *env = getenv("CONVND_DEVICE");
        convnd_device want = CONVND_DEVICE_AUTO;
        if (env && *env) {
            if (!strcmp(env, "gpu"))
                want = CONVND_DEVICE_GPU;
            else if (!strcmp(env, "emulated"))
                want = CONVND_DEVICE_EMULATED;
            else if (strcmp(env, "auto") != 0)
                snprintf(device_problem, sizeof device_problem,
                         "CONVND_DEVICE=%s: expected gpu, emulated or auto", env);
        }
        if (!device_problem[0] && select_locked(want, "CONVND_DEVICE=gpu") != CONVND_OK) {
            /* Keep the request: kernels must not run on the CPU when the GPU was demanded. */
            snprintf(device_problem, sizeof device_problem, "%s", convnd_last_error());
        }
        if (device_problem[0]) {
            device_value = want == CONVND_DEVICE_EMULATED ? want : CONVND_DEVICE_GPU;
            snprintf(device_name_text, sizeof device_name_text, "unusable device (%s)",
                     device_problem);
            __atomic_store_n(&device_resolved, 1, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&device_lock);
}

convnd_status convnd_set_device(convnd_device d) {
    pthread_mutex_lock(&device_lock);
    const convnd_status st = select_locked(d, "convnd_set_device");
    pthread_mutex_unlock(&device_lock);
    return st;
}

convnd_status convnd_set_thread_device(convnd_device d) {
    char why[200] = "";
    if (d != CONVND_DEVICE_AUTO && d != CONVND_DEVICE_GPU && d != CONVND_DEVICE_EMULATED)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "device=%d: expected CONVND_DEVICE_AUTO (0), _GPU (1) or _EMULATED (2)",
                            (int)d);
    if (d == CONVND_DEVICE_GPU && gpu_count(why, sizeof why) <= 0)
        return convnd_error(CONVND_ERR_DEVICE, "convnd_set_thread_device asks for the GPU, but %s",
                            why);
    thread_device = d;
    return CONVND_OK;
}

convnd_device convnd_active_device(void) {
    if (thread_device != CONVND_DEVICE_AUTO) return thread_device;
    resolve();
    return device_value;
}

const char *convnd_device_name(void) {
    resolve();
    return device_name_text;
}

/* The device for a memory call, or an error when the requested one is unusable. */
static convnd_status usable_device(convnd_device *d) {
    if (thread_device != CONVND_DEVICE_AUTO) {
        *d = thread_device;
        return CONVND_OK;
    }
    resolve();
    if (device_problem[0]) return convnd_error(CONVND_ERR_DEVICE, "%s", device_problem);
    *d = device_value;
    return CONVND_OK;
}

convnd_status convnd_malloc(void **ptr, size_t bytes) {
    if (!ptr) return convnd_error(CONVND_ERR_NULL_POINTER, "convnd_malloc: ptr is NULL");
    *ptr = NULL;
    convnd_device d = CONVND_DEVICE_EMULATED;
    const convnd_status st = usable_device(&d);
    if (st != CONVND_OK) return st;
    convnd_device_count_allocation();
#ifdef CONVND_HAVE_CUDA
    if (d == CONVND_DEVICE_GPU) {
        const cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 1);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            return convnd_error(CONVND_ERR_OUT_OF_MEMORY,
                                "convnd_malloc: cudaMalloc of %zu bytes: out of device memory",
                                bytes);
        }
        if (e != cudaSuccess) return cuda_failed(e, "cudaMalloc");
        return CONVND_OK;
    }
#endif
    /* Exactly `bytes`, so AddressSanitizer sees a kernel reading past a tensor; aligned like
     * cudaMalloc's memory, which a workspace must be (CONVND_WORKSPACE_ALIGNMENT). */
    if (posix_memalign(ptr, CONVND_WORKSPACE_ALIGNMENT, bytes ? bytes : 1) != 0) *ptr = NULL;
    if (!*ptr)
        return convnd_error(CONVND_ERR_OUT_OF_MEMORY, "convnd_malloc: %zu bytes: out of memory",
                            bytes);
    return CONVND_OK;
}

convnd_status convnd_free(void *ptr) {
    if (!ptr) return CONVND_OK;
    convnd_device d = CONVND_DEVICE_EMULATED;
    const convnd_status st = usable_device(&d);
    if (st != CONVND_OK) return st;
#ifdef CONVND_HAVE_CUDA
    if (d == CONVND_DEVICE_GPU) {
        CUDA_CHECK(cudaFree(ptr));
        return CONVND_OK;
    }
#endif
    free(ptr);
    return CONVND_OK;
}

typedef enum copy_kind { H2D, D2H, D2D } copy_kind;

static convnd_status copy(void *dst, const void *src, size_t bytes, copy_kind kind) {
    static const char *const names[] = {"convnd_memcpy_h2d", "convnd_memcpy_d2h",
                                        "convnd_memcpy_d2d"};
    if (bytes == 0) return CONVND_OK;
    if (!dst || !src)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s: %s is NULL (%zu bytes)", names[kind],
                            !dst ? "dst" : "src", bytes);
    convnd_device d = CONVND_DEVICE_EMULATED;
    const convnd_status st = usable_device(&d);
    if (st != CONVND_OK) return st;
#ifdef CONVND_HAVE_CUDA
    if (d == CONVND_DEVICE_GPU) {
        static const enum cudaMemcpyKind kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                                    cudaMemcpyDeviceToDevice};
        CUDA_CHECK(cudaMemcpy(dst, src, bytes, kinds[kind]));
        return CONVND_OK;
    }
#endif
    memmove(dst, src, bytes);
    return CONVND_OK;
}

convnd_status convnd_memcpy_h2d(void *dst, const void *src, size_t bytes) {
    return copy(dst, src, bytes, H2D);
}
convnd_status convnd_memcpy_d2h(void *dst, const void *src, size_t bytes) {
    return copy(dst, src, bytes, D2H);
}
convnd_status convnd_memcpy_d2d(void *dst, const void *src, size_t bytes) {
    return copy(dst, src, bytes, D2D);
}

convnd_status convnd_memset(void *dst, int value, size_t bytes) {
    if (bytes == 0) return CONVND_OK;
    if (!dst)
        return convnd_error(CONVND_ERR_NULL_POINTER, "convnd_memset: dst is NULL (%zu bytes)",
                            bytes);
    convnd_device d = CONVND_DEVICE_EMULATED;
    const convnd_status st = usable_device(&d);
    if (st != CONVND_OK) return st;
#ifdef CONVND_HAVE_CUDA
    if (d == CONVND_DEVICE_GPU) {
        CUDA_CHECK(cudaMemset(dst, value, bytes));
        return CONVND_OK;
    }
#endif
    memset(dst, value, bytes);
    return CONVND_OK;
}

convnd_status convnd_synchronize(void *stream) {
    convnd_device d = CONVND_DEVICE_EMULATED;
    const convnd_status st = usable_device(&d);
    if (st != CONVND_OK) return st;
#ifdef CONVND_HAVE_CUDA
    if (d == CONVND_DEVICE_GPU) {
        /* Also reports an earlier kernel's asynchronous failure. */
        CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream));
        return CONVND_OK;
    }
#endif
    (void)stream; /* the emulated device runs every launch to completion */
    return CONVND_OK;
}

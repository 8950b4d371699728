#include "CBarscope.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

void bs_set_string(gpointer o, const char *n, const char *v) { g_object_set(o, n, v, NULL); }
void bs_set_int(gpointer o, const char *n, gint v) { g_object_set(o, n, v, NULL); }
void bs_set_uint(gpointer o, const char *n, guint v) { g_object_set(o, n, v, NULL); }
void bs_set_uint64(gpointer o, const char *n, guint64 v) { g_object_set(o, n, v, NULL); }
void bs_set_bool(gpointer o, const char *n, gboolean v) { g_object_set(o, n, v, NULL); }
void bs_set_pointer_object(gpointer o, const char *n, gpointer v) { g_object_set(o, n, v, NULL); }
gboolean bs_has_property(gpointer o, const char *n) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(o), n) != NULL;
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BS_TSAN 1
#endif
#endif
#ifdef BS_TSAN
#include <sanitizer/tsan_interface.h>
void bs_handoff_publish(const void *data) { __tsan_release((void *)data); }
void bs_handoff_receive(const void *data) { __tsan_acquire((void *)data); }
#else
void bs_handoff_publish(const void *data) { (void)data; }
void bs_handoff_receive(const void *data) { (void)data; }
#endif

gulong bs_connect_draw(GstElement *overlay, bs_draw_callback callback, gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(overlay, "draw", G_CALLBACK(callback), data, destroy, 0);
}

gulong bs_connect_source_setup(GstElement *uridecodebin, bs_source_setup_callback callback, gpointer data,
                              GClosureNotify destroy) {
    return g_signal_connect_data(uridecodebin, "source-setup", G_CALLBACK(callback), data, destroy, 0);
}

static GstStaticCaps frame_caps = GST_STATIC_CAPS("timestamp/x-barscope-frame");

void bs_buffer_set_frame_number(GstBuffer *b, guint64 number) {
    GstCaps *caps = gst_static_caps_get(&frame_caps);
    GstReferenceTimestampMeta *m = gst_buffer_get_reference_timestamp_meta(b, caps);
    if (m) m->timestamp = number;
    else gst_buffer_add_reference_timestamp_meta(b, caps, number, GST_CLOCK_TIME_NONE);
    gst_caps_unref(caps);
}

gint64 bs_buffer_frame_number(GstBuffer *b) {
    GstCaps *caps = gst_static_caps_get(&frame_caps);
    GstReferenceTimestampMeta *m = gst_buffer_get_reference_timestamp_meta(b, caps);
    gst_caps_unref(caps);
    return m ? (gint64)m->timestamp : -1;
}

static GstStaticCaps region_caps = GST_STATIC_CAPS("timestamp/x-barscope-region");

void bs_buffer_set_region(GstBuffer *b, guint64 region, guint64 frame) {
    GstCaps *caps = gst_static_caps_get(&region_caps);
    GstReferenceTimestampMeta *m = gst_buffer_get_reference_timestamp_meta(b, caps);
    if (m) {
        m->timestamp = region;
        m->duration = frame;
    } else {
        gst_buffer_add_reference_timestamp_meta(b, caps, region, frame);
    }
    gst_caps_unref(caps);
}

gboolean bs_buffer_region(GstBuffer *b, guint64 *region, guint64 *frame) {
    GstCaps *caps = gst_static_caps_get(&region_caps);
    GstReferenceTimestampMeta *m = gst_buffer_get_reference_timestamp_meta(b, caps);
    gst_caps_unref(caps);
    if (!m) return FALSE;
    *region = m->timestamp;
    *frame = m->duration;
    return TRUE;
}

// The handler runs on whichever thread takes the signal and the counts are read by a watcher thread: volatile
// sig_atomic_t orders nothing between threads (ThreadSanitizer reported the watcher's read racing the handler's
// write), and two different signals could nest and lose an increment. Lock-free C11 atomics are safe in a handler.
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs lock-free atomics");
static atomic_int stop_requests = 0;
static atomic_int last_signal = 0;
// The handler writes a byte here for each signal: the watcher sleeps in read() until one comes (write and read are
// async-signal-safe; a byte written before the watcher reads is still there when it does).
static int wake_pipe[2] = {-1, -1};
static void on_signal(int sig) {
    int saved = errno;
    atomic_store_explicit(&last_signal, sig, memory_order_relaxed);
    // Release: a reader that sees the new count sees its signal too.
    atomic_fetch_add_explicit(&stop_requests, 1, memory_order_release);
    if (wake_pipe[1] >= 0) {
        ssize_t written = write(wake_pipe[1], "", 1);
        (void)written;  // a full pipe already holds a wake
    }
    errno = saved;
}

void bs_install_signal_handlers(void) {
    if (wake_pipe[0] < 0 && pipe(wake_pipe) == 0) {
        fcntl(wake_pipe[0], F_SETFD, FD_CLOEXEC);
        fcntl(wake_pipe[1], F_SETFD, FD_CLOEXEC);
        fcntl(wake_pipe[1], F_SETFL, O_NONBLOCK);
    }
    struct sigaction sa;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    // A parent may have started us with these blocked (Foundation's Process does): unblock them.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
int bs_stop_requests(void) { return atomic_load_explicit(&stop_requests, memory_order_acquire); }
int bs_wait_stop_requests(int seen) {
    for (;;) {
        int n = atomic_load_explicit(&stop_requests, memory_order_acquire);
        if (n > seen) return n;
        char bytes[16];
        // Without the pipe (it could not be made), a look every 50 ms.
        if (wake_pipe[0] < 0 || (read(wake_pipe[0], bytes, sizeof bytes) < 0 && errno != EINTR)) usleep(50000);
    }
}
int bs_last_signal(void) { return atomic_load_explicit(&last_signal, memory_order_relaxed); }

// A video decoder made anywhere inside `bin` (decodebin's avdec_h264, vp8dec, ...) gets at most `threads` threads:
// many streams in one process must not each start a thread per core. deep-element-added fires on the thread that
// adds the element, before it starts.
static void bs_on_deep_element_added(GstBin *bin, GstBin *sub, GstElement *element, gpointer data) {
    (void)bin;
    (void)sub;
    GstElementFactory *factory = gst_element_get_factory(element);
    const gchar *klass = factory ? gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) : NULL;
    if (!klass || !strstr(klass, "Decoder") || !strstr(klass, "Video")) return;
    gint threads = GPOINTER_TO_INT(data);
    const char *names[] = {"max-threads", "threads"};
    for (unsigned i = 0; i < 2; i++) {
        GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), names[i]);
        if (!spec) continue;
        if (spec->value_type == G_TYPE_INT) g_object_set(element, names[i], (gint)threads, NULL);
        else if (spec->value_type == G_TYPE_UINT) g_object_set(element, names[i], (guint)threads, NULL);
        return;
    }
}

gulong bs_limit_decoder_threads(GstElement *bin, gint threads) {
    return g_signal_connect_data(bin, "deep-element-added", G_CALLBACK(bs_on_deep_element_added),
                                 GINT_TO_POINTER(threads), NULL, 0);
}

gint bs_video_decoder_threads(GstElement *bin) {
    GstIterator *it = gst_bin_iterate_recurse(GST_BIN(bin));
    GValue item = G_VALUE_INIT;
    gint threads = -1;
    while (threads < 0 && gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
        GstElement *element = g_value_get_object(&item);
        GstElementFactory *factory = gst_element_get_factory(element);
        const gchar *klass = factory ? gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) : NULL;
        if (klass && strstr(klass, "Decoder") && strstr(klass, "Video")) {
            GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "max-threads");
            if (!spec) spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "threads");
            if (spec && spec->value_type == G_TYPE_INT) g_object_get(element, spec->name, &threads, NULL);
            else if (spec && spec->value_type == G_TYPE_UINT) {
                guint u = 0;
                g_object_get(element, spec->name, &u, NULL);
                threads = (gint)u;
            }
        }
        g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(it);
    return threads;
}

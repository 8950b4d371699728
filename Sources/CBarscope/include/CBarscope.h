// C shims for what Swift cannot import from GStreamer, GLib and ZBar: function-like macros, varargs
// functions and GObject casts. Each shim is one line of C with the reason it exists. Nothing here does work
// that Swift could do itself.
#ifndef CBARSCOPE_H
#define CBARSCOPE_H

#include <gst/gst.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <gst/app/app.h>
#include <gst/video/video.h>
// cairo_t only travels through the draw signal here; its definition comes from the CCairo module.
typedef struct _cairo cairo_t;

// syscall() is varargs: the calling thread's id (Linux's setpriority takes it for one thread's nice value).
static inline int bs_thread_id(void) { return (int)syscall(SYS_gettid); }

// Field-access macros (GST_BUFFER_PTS, GST_MESSAGE_TYPE, ...) are not importable.
static inline GstClockTime bs_buffer_pts(GstBuffer *b) { return GST_BUFFER_PTS(b); }
static inline void bs_buffer_set_pts(GstBuffer *b, GstClockTime t) { GST_BUFFER_PTS(b) = t; }
static inline GstClockTime bs_buffer_duration(GstBuffer *b) { return GST_BUFFER_DURATION(b); }
static inline void bs_buffer_set_duration(GstBuffer *b, GstClockTime t) { GST_BUFFER_DURATION(b) = t; }
static inline GstMessageType bs_message_type(GstMessage *m) { return GST_MESSAGE_TYPE(m); }
static inline GstObject *bs_message_src(GstMessage *m) { return GST_MESSAGE_SRC(m); }
static inline GstEventType bs_event_type(GstEvent *e) { return GST_EVENT_TYPE(e); }
// A probe's data is a buffer or an event depending on its type: these return NULL for the other kind.
static inline GstBuffer *bs_probe_buffer(GstPadProbeInfo *i) {
    return (GST_PAD_PROBE_INFO_TYPE(i) & GST_PAD_PROBE_TYPE_BUFFER) ? GST_PAD_PROBE_INFO_BUFFER(i) : NULL;
}
static inline GstEvent *bs_probe_event(GstPadProbeInfo *i) {
    return (GST_PAD_PROBE_INFO_TYPE(i) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) ? GST_PAD_PROBE_INFO_EVENT(i) : NULL;
}
// Flush events carry their own probe type (EVENT_FLUSH), not EVENT_DOWNSTREAM.
static inline GstEvent *bs_probe_event_any(GstPadProbeInfo *i) {
    return (GST_PAD_PROBE_INFO_TYPE(i) & (GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_EVENT_FLUSH))
        ? GST_PAD_PROBE_INFO_EVENT(i) : NULL;
}
// GST_PAD_PROBE_INFO_DATA is a macro: a probe that rewrites an event replaces it (the old one is released).
static inline void bs_probe_replace_event(GstPadProbeInfo *i, GstEvent *e) {
    gst_event_unref(GST_PAD_PROBE_INFO_EVENT(i));
    GST_PAD_PROBE_INFO_DATA(i) = e;
}
// gst_buffer_make_writable and GST_PAD_PROBE_INFO_DATA are macros: a probe that restamps a buffer needs both
// (the writable buffer may be a copy, which must replace the probe's data). NULL when the data is not a buffer.
static inline GstBuffer *bs_probe_writable_buffer(GstPadProbeInfo *i) {
    if (!(GST_PAD_PROBE_INFO_TYPE(i) & GST_PAD_PROBE_TYPE_BUFFER)) return NULL;
    GstBuffer *b = gst_buffer_make_writable(GST_PAD_PROBE_INFO_BUFFER(i));
    GST_PAD_PROBE_INFO_DATA(i) = b;
    return b;
}
static inline guint8 *bs_frame_plane_data(GstVideoFrame *f, guint p) { return GST_VIDEO_FRAME_PLANE_DATA(f, p); }
static inline gint bs_frame_plane_stride(GstVideoFrame *f, guint p) { return GST_VIDEO_FRAME_PLANE_STRIDE(f, p); }
static inline gint bs_frame_width(GstVideoFrame *f) { return GST_VIDEO_FRAME_WIDTH(f); }
static inline gint bs_frame_height(GstVideoFrame *f) { return GST_VIDEO_FRAME_HEIGHT(f); }
static inline GstVideoFormat bs_frame_format(GstVideoFrame *f) { return GST_VIDEO_FRAME_FORMAT(f); }
static inline gboolean bs_format_has_luma_plane(GstVideoFormat f) {
    const GstVideoFormatInfo *i = gst_video_format_get_info(f);
    // YUV with an 8-bit Y plane first (I420, NV12, ...) or plain grey (GRAY8).
    return (GST_VIDEO_FORMAT_INFO_IS_YUV(i) || GST_VIDEO_FORMAT_INFO_IS_GRAY(i)) && GST_VIDEO_FORMAT_INFO_PSTRIDE(i, 0) == 1
        && GST_VIDEO_FORMAT_INFO_PLANE(i, 0) == 0
        && GST_VIDEO_FORMAT_INFO_DEPTH(i, 0) == 8;
}

// GObject cast macros (G_OBJECT, GST_ELEMENT, GST_BIN, ...) are not importable; these are the casts we use.
static inline GObject *bs_object(gpointer p) { return G_OBJECT(p); }
static inline GstBin *bs_bin(gpointer p) { return GST_BIN(p); }
static inline GstAppSink *bs_app_sink(GstElement *e) { return GST_APP_SINK(e); }
static inline GstAppSrc *bs_app_src(GstElement *e) { return GST_APP_SRC(e); }
static inline GstObject *bs_gst_object(gpointer p) { return GST_OBJECT(p); }
static inline GObject *bs_gobject(gpointer p) { return G_OBJECT(p); }

// g_object_set/get are varargs.
void bs_set_string(gpointer object, const char *name, const char *value);
void bs_set_int(gpointer object, const char *name, gint value);
void bs_set_uint(gpointer object, const char *name, guint value);
void bs_set_uint64(gpointer object, const char *name, guint64 value);
void bs_set_bool(gpointer object, const char *name, gboolean value);
void bs_set_pointer_object(gpointer object, const char *name, gpointer value);
gboolean bs_has_property(gpointer object, const char *name);

// g_signal_connect is a macro; these name the callback types so Swift passes @convention(c) functions safely.
typedef void (*bs_draw_callback)(GstElement *overlay, cairo_t *cr, guint64 timestamp, guint64 duration, gpointer data);
// `destroy` releases `data` when the handler goes (with the element): the closure lives exactly as long.
// ThreadSanitizer cannot see GLib's GMutex and GCond (futexes), so the order GStreamer gives between handing it a
// callback's data (gst_pad_add_probe, g_signal_connect_data, gst_app_sink_set_callbacks, g_idle_add: each under a
// GMutex it takes again around every call) and a call on a streaming or pool thread is invisible to it. These two
// tell it about exactly that edge, keyed on the data pointer, and compile to nothing in a build without TSan:
// publish before handing the data over and at the end of each call; receive at the start of each call and in its
// destroy-notify.
void bs_handoff_publish(const void *data);
void bs_handoff_receive(const void *data);
gulong bs_connect_draw(GstElement *overlay, bs_draw_callback callback, gpointer data, GClosureNotify destroy);
typedef void (*bs_source_setup_callback)(GstElement *bin, GstElement *source, gpointer data);
gulong bs_connect_source_setup(GstElement *uridecodebin, bs_source_setup_callback callback, gpointer data,
                              GClosureNotify destroy);

// mallopt's parameter is a macro: at most `n` malloc arenas for the process (set before threads start).
static inline void bs_limit_malloc_arenas(int n) { mallopt(M_ARENA_MAX, n); }
// Gives the heap's free pages back to the system (malloc_trim(0), every arena): memory a stopped pipeline freed
// (its frame buffers) otherwise stays resident until the allocator happens to reuse it.
static inline void bs_release_free_memory(void) { malloc_trim(0); }

// Video decoders added anywhere inside `bin` get at most `threads` threads ("max-threads" or "threads").
gulong bs_limit_decoder_threads(GstElement *bin, gint threads);
/// The threads property of the first video decoder inside `bin` (-1: none, or it has no such property).
gint bs_video_decoder_threads(GstElement *bin);

// A frame's number travels with its buffer as a GstReferenceTimestampMeta under caps of our own
// ("timestamp/x-barscope-frame"): GST_STATIC_CAPS is a macro. Every branch keys on it, never on the pts.
// The buffer must be writable (a probe's bs_probe_writable_buffer); a number already there is replaced.
void bs_buffer_set_frame_number(GstBuffer *b, guint64 number);
/// The number set where the stream split, or -1 when the buffer carries none.
gint64 bs_buffer_frame_number(GstBuffer *b);
// The frame's viewfinder region and size, packed (four 16-bit fields, and two 32-bit ones), in a second reference
// timestamp meta: the crop and the scanner read their frame's region from the buffer, with no lookup.
void bs_buffer_set_region(GstBuffer *b, guint64 region, guint64 frame);
gboolean bs_buffer_region(GstBuffer *b, guint64 *region, guint64 *frame);
// GST_BUFFER_FLAG_IS_SET and gst_buffer_is_writable are macros: whether a frame may be drawn on in place.
static inline gboolean bs_buffer_is_writable(GstBuffer *b) { return gst_buffer_is_writable(b); }
static inline gboolean bs_memory_is_writable(GstBuffer *b) {
    guint n = gst_buffer_n_memory(b);
    for (guint i = 0; i < n; i++)
        if (!gst_memory_is_writable(gst_buffer_peek_memory(b, i))) return FALSE;
    return TRUE;
}

// Signals arrive on any thread; the handler only counts them (and wakes `bs_wait_stop_requests`). Only the command
// line reads the count: the library never does (a signal is the process's, not one run's).
void bs_install_signal_handlers(void);
/// Number of SIGINT/SIGTERM/SIGHUP received since start (SIGHUP counts as a stop request too).
int bs_stop_requests(void);
/// Blocks until the count passes `seen`; returns it.
int bs_wait_stop_requests(int seen);
int bs_last_signal(void);

#endif

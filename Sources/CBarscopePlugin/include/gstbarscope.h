// The `barscope` element's C face: only the GObject and plugin boilerplate that Swift cannot write (type
// registration macros, varargs property and structure calls). The element's work is done by the Swift functions
// declared at the end, which the plugin library exports.
#ifndef GST_BARSCOPE_H
#define GST_BARSCOPE_H

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/video/gstvideofilter.h>

G_BEGIN_DECLS

/// The user's settings. Each change bumps `generation`; a frame copies the strings out (under the object lock) only
/// when the generation moved since the last frame, so the per-frame path allocates nothing.
typedef struct {
    guint generation;      // bumped by every property change
    gboolean message;      // post `barcode` messages (stock element: default TRUE)
    gboolean attach_frame; // add the frame as a GstSample to each message (stock: default FALSE)
    gboolean cache;        // report a code only when it appears, not on every frame (stock: default FALSE)
    gboolean draw;         // draw the overlay in place (BGRx/BGRA frames)
    gchar *viewfinder;     // "off" or "W:H"
    gchar *insets;         // "20" or "top,left,bottom,right"
    gchar *region;         // normalised "x,y,w,h", or NULL
    gchar *symbologies;    // zbarimg -S values separated by spaces or commas, or NULL
    guint threads;         // scanning threads; above 1 (and not drawing), messages are posted asynchronously
    gchar *style;          // overlay style, "key=value;key=value" as the tool's --style, or NULL
    gchar *engine;         // decoding engine: "zbar" (default), "zxing" or "both"
} BarscopeSettings;

void barscope_settings_clear(BarscopeSettings *s);

/// Posts one `barcode` element message with the stock element's fields, plus `polygon` and `bounds`.
/// Varargs structure building lives here; Swift decides what to post.
void barscope_post_barcode(GstVideoFilter *filter, GstBuffer *buffer, const char *type, const char *symbol,
                           gint quality, const gint *polygon_xy, guint points, const gint bounds[4],
                           gboolean attach_frame);

// Implemented in Swift (Sources/BarscopeElement), exported with @_cdecl.
/// The element's Swift state; `filter` is the element itself (borrowed: it owns the state).
void *barscope_swift_new(GstVideoFilter *filter);
void barscope_swift_free(void *handle);
/// Scans (and draws into) one frame; returns FALSE only for a frame it cannot read at all. `settings`' strings are
/// NULL unless `changed` (then they are the new values, owned by the caller).
gboolean barscope_swift_process(void *handle, GstVideoFilter *filter, GstVideoFrame *frame,
                                const BarscopeSettings *settings, gboolean changed);
/// Whether the frame was mapped for writing (basetransform maps it read-only when passing through): the one test
/// of whether drawing on it is allowed, decided per frame, whatever the `draw` property says meanwhile.
static inline gboolean barscope_frame_is_writable(const GstVideoFrame *frame) {
    return (frame->map[0].flags & GST_MAP_WRITE) != 0;
}
/// Waits until every frame handed to the scanning threads has been reported (before EOS, a flush, or stop).
void barscope_swift_drain(void *handle);
/// Checks settings before they are stored; returns NULL or a newly allocated message naming the bad value.
gchar *barscope_swift_validate(const char *property, const char *value);

G_END_DECLS
#endif

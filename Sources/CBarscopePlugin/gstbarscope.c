// GObject and plugin boilerplate of the `barscope` element. Documentation and the message schema are at the top of
// Sources/BarscopeElement/BarscopeElement.swift, where the work is done.
#include "gstbarscope.h"

#ifndef PACKAGE
#define PACKAGE "barscope"
#endif

// The settings are guarded by the object lock, a GMutex: a futex that ThreadSanitizer cannot see, so set_property on
// the application's thread and the copy on the streaming thread would look unordered. SETTINGS_LOCK/UNLOCK take that
// same lock and, under TSan only, tell it so.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#include <sanitizer/tsan_interface.h>
#define SETTINGS_LOCK(self) (GST_OBJECT_LOCK(self), __tsan_acquire(&(self)->settings))
#define SETTINGS_UNLOCK(self) (__tsan_release(&(self)->settings), GST_OBJECT_UNLOCK(self))
#endif
#endif
#ifndef SETTINGS_LOCK
#define SETTINGS_LOCK(self) GST_OBJECT_LOCK(self)
#define SETTINGS_UNLOCK(self) GST_OBJECT_UNLOCK(self)
#endif

typedef struct {
    GstVideoFilter parent;
    BarscopeSettings settings; // guarded by the object lock
    void *swift;               // the Swift state (scanners, tracker, renderer): made in start(), freed in stop()
    guint seen_generation;     // the settings' generation the Swift state last took (streaming thread only)
} GstBarscope;

typedef struct {
    GstVideoFilterClass parent_class;
} GstBarscopeClass;

G_DEFINE_TYPE(GstBarscope, gst_barscope, GST_TYPE_VIDEO_FILTER)

enum {
    PROP_0, PROP_MESSAGE, PROP_ATTACH_FRAME, PROP_CACHE, PROP_DRAW, PROP_VIEWFINDER, PROP_INSETS, PROP_REGION,
    PROP_SYMBOLOGIES, PROP_THREADS, PROP_STYLE, PROP_ENGINE
};

#define FORMATS "{ GRAY8, I420, YV12, NV12, NV21, Y41B, Y42B, YUV9, YVU9, BGRx, BGRA }"

void barscope_settings_clear(BarscopeSettings *s) {
    g_free(s->viewfinder);
    g_free(s->insets);
    g_free(s->region);
    g_free(s->symbologies);
    g_free(s->style);
    g_free(s->engine);
    memset(s, 0, sizeof *s);
}

static void settings_copy(const BarscopeSettings *from, BarscopeSettings *to) {
    *to = *from;
    to->viewfinder = g_strdup(from->viewfinder);
    to->insets = g_strdup(from->insets);
    to->region = g_strdup(from->region);
    to->symbologies = g_strdup(from->symbologies);
    to->style = g_strdup(from->style);
    to->engine = g_strdup(from->engine);
}

// Where each string property lives (NULL for the others): set and get share this one map.
static gchar **string_slot(GstBarscope *self, guint id) {
    switch (id) {
    case PROP_VIEWFINDER: return &self->settings.viewfinder;
    case PROP_INSETS: return &self->settings.insets;
    case PROP_REGION: return &self->settings.region;
    case PROP_SYMBOLOGIES: return &self->settings.symbologies;
    case PROP_STYLE: return &self->settings.style;
    case PROP_ENGINE: return &self->settings.engine;
    default: return NULL;
    }
}

static void gst_barscope_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GstBarscope *self = (GstBarscope *)object;
    gchar **target = string_slot(self, id);
    if (target) {
        const gchar *text = g_value_get_string(value);
        gchar *problem = barscope_swift_validate(pspec->name, text);
        if (problem) {
            // A property cannot fail; the bad value is refused with a warning naming it, the old one stays.
            g_warning("barscope: %s", problem);
            g_free(problem);
            return;
        }
        SETTINGS_LOCK(self);
        g_free(*target);
        *target = g_strdup(text);
        self->settings.generation++;
        SETTINGS_UNLOCK(self);
        return;
    }
    SETTINGS_LOCK(self);
    switch (id) {
    case PROP_MESSAGE: self->settings.message = g_value_get_boolean(value); break;
    case PROP_ATTACH_FRAME: self->settings.attach_frame = g_value_get_boolean(value); break;
    case PROP_CACHE: self->settings.cache = g_value_get_boolean(value); break;
    case PROP_DRAW: self->settings.draw = g_value_get_boolean(value); break;
    case PROP_THREADS: self->settings.threads = g_value_get_uint(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    self->settings.generation++;
    gboolean draw = self->settings.draw;
    SETTINGS_UNLOCK(self);
    if (id == PROP_DRAW) gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), !draw);
}

static void gst_barscope_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GstBarscope *self = (GstBarscope *)object;
    SETTINGS_LOCK(self);
    gchar **text = string_slot(self, id);
    if (text) {
        g_value_set_string(value, *text);
        SETTINGS_UNLOCK(self);
        return;
    }
    switch (id) {
    case PROP_MESSAGE: g_value_set_boolean(value, self->settings.message); break;
    case PROP_ATTACH_FRAME: g_value_set_boolean(value, self->settings.attach_frame); break;
    case PROP_CACHE: g_value_set_boolean(value, self->settings.cache); break;
    case PROP_DRAW: g_value_set_boolean(value, self->settings.draw); break;
    case PROP_THREADS: g_value_set_uint(value, self->settings.threads); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    SETTINGS_UNLOCK(self);
}

static GstFlowReturn gst_barscope_transform_frame_ip(GstVideoFilter *filter, GstVideoFrame *frame) {
    GstBarscope *self = (GstBarscope *)filter;
    if (!self->swift) return GST_FLOW_OK; // not started: nothing to scan with
    BarscopeSettings snapshot;
    SETTINGS_LOCK(self);
    gboolean changed = self->settings.generation != self->seen_generation;
    if (changed) {
        settings_copy(&self->settings, &snapshot);
        self->seen_generation = self->settings.generation;
    } else {
        snapshot = self->settings; // the scalars; the strings are not read when unchanged
        snapshot.viewfinder = snapshot.insets = snapshot.region = NULL;
        snapshot.symbologies = snapshot.style = snapshot.engine = NULL;
    }
    SETTINGS_UNLOCK(self);
    if (!barscope_swift_process(self->swift, filter, frame, &snapshot, changed))
        GST_DEBUG_OBJECT(self, "frame not scanned"); // one bad frame is not an error: the stream goes on
    if (changed) barscope_settings_clear(&snapshot);
    return GST_FLOW_OK;
}

// Asynchronous scanning (threads > 1) must report every frame before EOS, a flush, new caps (attached frames carry
// the caps current when they are posted) or a stop goes by.
static gboolean gst_barscope_sink_event(GstBaseTransform *base, GstEvent *event) {
    GstEventType type = GST_EVENT_TYPE(event);
    if (type == GST_EVENT_EOS || type == GST_EVENT_FLUSH_STOP || type == GST_EVENT_SEGMENT || type == GST_EVENT_CAPS)
        barscope_swift_drain(((GstBarscope *)base)->swift);
    return GST_BASE_TRANSFORM_CLASS(gst_barscope_parent_class)->sink_event(base, event);
}

// Runtime state (the scanning threads, the tracker) lives from start to stop, as a gst-plugins-rs element's State:
// an element that is made and never started costs nothing, and a restart begins clean.
// `swift` is set and cleared under the object lock too: the element's last unref, and so its finalize, can come on
// any thread (seen: a pool thread, after stop on the application's), ordered after stop by GLib's atomic refcount,
// which ThreadSanitizer cannot see.
static gboolean gst_barscope_start(GstBaseTransform *base) {
    GstBarscope *self = (GstBarscope *)base;
    void *swift = barscope_swift_new(GST_VIDEO_FILTER(self));
    SETTINGS_LOCK(self);
    self->swift = swift;
    self->seen_generation = self->settings.generation - 1; // the first frame takes every setting
    SETTINGS_UNLOCK(self);
    return TRUE;
}

static void *gst_barscope_take_swift(GstBarscope *self) {
    SETTINGS_LOCK(self);
    void *swift = self->swift;
    self->swift = NULL;
    SETTINGS_UNLOCK(self);
    return swift;
}

static gboolean gst_barscope_stop(GstBaseTransform *base) {
    GstBarscope *self = (GstBarscope *)base;
    barscope_swift_drain(self->swift);
    barscope_swift_free(gst_barscope_take_swift(self));
    return TRUE;
}

static void gst_barscope_finalize(GObject *object) {
    GstBarscope *self = (GstBarscope *)object;
    barscope_swift_free(gst_barscope_take_swift(self));
    SETTINGS_LOCK(self);
    barscope_settings_clear(&self->settings);
    SETTINGS_UNLOCK(self);
    G_OBJECT_CLASS(gst_barscope_parent_class)->finalize(object);
}

static void gst_barscope_init(GstBarscope *self) {
    self->settings.message = TRUE;
    self->settings.viewfinder = g_strdup("off");
    self->settings.insets = g_strdup("20");
    self->settings.engine = g_strdup("zbar");
    self->settings.threads = 1;
    self->swift = NULL;
    gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
    gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), TRUE);
}

static void gst_barscope_class_init(GstBarscopeClass *klass) {
    GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
    GstVideoFilterClass *filter_class = GST_VIDEO_FILTER_CLASS(klass);
    gobject_class->set_property = gst_barscope_set_property;
    gobject_class->get_property = gst_barscope_get_property;
    gobject_class->finalize = gst_barscope_finalize;
    GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;

    g_object_class_install_property(gobject_class, PROP_MESSAGE,
        g_param_spec_boolean("message", "message", "Post a barcode message for each detected code", TRUE, rw));
    g_object_class_install_property(gobject_class, PROP_ATTACH_FRAME,
        g_param_spec_boolean("attach-frame", "Attach frame",
            "Attach the frame with the code to each barcode message (as a GstSample in 'frame')", FALSE, rw));
    g_object_class_install_property(gobject_class, PROP_CACHE,
        g_param_spec_boolean("cache", "cache",
            "Report a code when it appears, not again on every following frame", FALSE, rw));
    g_object_class_install_property(gobject_class, PROP_DRAW,
        g_param_spec_boolean("draw", "Draw",
            "Draw the viewfinder and each code's box, corners and label in place (BGRx/BGRA frames)", FALSE, rw));
    g_object_class_install_property(gobject_class, PROP_VIEWFINDER,
        g_param_spec_string("viewfinder", "Viewfinder",
            "Region of interest: 'off' (whole frame) or W:H, the largest such rectangle inside the insets", "off", rw));
    g_object_class_install_property(gobject_class, PROP_INSETS,
        g_param_spec_string("insets", "Insets",
            "Minimum viewfinder distance from the frame edges in pixels: 'N' or 'top,left,bottom,right'", "20", rw));
    g_object_class_install_property(gobject_class, PROP_REGION,
        g_param_spec_string("region", "Region",
            "Normalised scanning region 'x,y,w,h' in 0..1 of the frame (instead of viewfinder and insets)", NULL, rw));
    g_object_class_install_property(gobject_class, PROP_SYMBOLOGIES,
        g_param_spec_string("symbologies", "Symbologies",
            "Decoder settings in zbarimg -S syntax, separated by spaces: 'disable qrcode.enable'", NULL, rw));

    g_object_class_install_property(gobject_class, PROP_THREADS,
        g_param_spec_uint("threads", "Threads",
            "Scanning threads, one ZBar scanner each (0 = one per core). Above 1, and when not drawing, frames pass "
            "at once and their messages follow in order from the scanning threads", 0, 64, 1, rw));

    g_object_class_install_property(gobject_class, PROP_STYLE,
        g_param_spec_string("style", "Style",
            "Overlay style as the barscope tool's --style, 'key=value' pairs separated by ';': "
            "'box-color=#FF8800;labels=off'", NULL, rw));
    g_object_class_install_property(gobject_class, PROP_ENGINE,
        g_param_spec_string("engine", "Engine",
            "Decoding engine: 'zbar' (fastest), 'zxing' (zxing-cpp: also DataMatrix, Aztec, PDF417, Micro QR) or "
            "'both' (results cross-checked)", "zbar", rw));

    gst_element_class_set_static_metadata(element_class, "Barscope barcode scanner", "Filter/Analyzer/Video",
        "Detects barcodes and QR codes (ZBar) within a viewfinder, posts them as messages with their polygons, "
        "and optionally draws them", "Barscope developers");
    GstCaps *caps = gst_caps_from_string("video/x-raw, format = (string) " FORMATS);
    gst_element_class_add_pad_template(element_class,
        gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
    gst_element_class_add_pad_template(element_class,
        gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
    gst_caps_unref(caps);
    filter_class->transform_frame_ip = gst_barscope_transform_frame_ip;
    GST_BASE_TRANSFORM_CLASS(klass)->sink_event = gst_barscope_sink_event;
    GST_BASE_TRANSFORM_CLASS(klass)->start = gst_barscope_start;
    GST_BASE_TRANSFORM_CLASS(klass)->stop = gst_barscope_stop;
}

void barscope_post_barcode(GstVideoFilter *filter, GstBuffer *buffer, const char *type, const char *symbol,
                           gint quality, const gint *polygon_xy, guint points, const gint bounds[4],
                           gboolean attach_frame) {
    GstBaseTransform *base = GST_BASE_TRANSFORM(filter);
    GstClockTime timestamp = GST_BUFFER_PTS(buffer);
    GstClockTime duration = GST_BUFFER_DURATION(buffer);
    GstClockTime running_time = gst_segment_to_running_time(&base->segment, GST_FORMAT_TIME, timestamp);
    GstClockTime stream_time = gst_segment_to_stream_time(&base->segment, GST_FORMAT_TIME, timestamp);
    GstStructure *s = gst_structure_new("barcode",
        "timestamp", G_TYPE_UINT64, timestamp,
        "stream-time", G_TYPE_UINT64, stream_time,
        "running-time", G_TYPE_UINT64, running_time,
        "type", G_TYPE_STRING, type,
        "symbol", G_TYPE_STRING, symbol,
        "quality", G_TYPE_INT, quality, NULL);
    if (GST_CLOCK_TIME_IS_VALID(duration))
        gst_structure_set(s, "duration", G_TYPE_UINT64, duration, NULL);

    GValue polygon = G_VALUE_INIT, point = G_VALUE_INIT, coordinate = G_VALUE_INIT;
    g_value_init(&polygon, GST_TYPE_ARRAY);
    g_value_init(&coordinate, G_TYPE_INT);
    for (guint i = 0; i < points; i++) {
        g_value_init(&point, GST_TYPE_ARRAY);
        g_value_set_int(&coordinate, polygon_xy[2 * i]);
        gst_value_array_append_value(&point, &coordinate);
        g_value_set_int(&coordinate, polygon_xy[2 * i + 1]);
        gst_value_array_append_value(&point, &coordinate);
        gst_value_array_append_and_take_value(&polygon, &point);
        memset(&point, 0, sizeof point);
    }
    gst_structure_take_value(s, "polygon", &polygon);
    GValue box = G_VALUE_INIT;
    g_value_init(&box, GST_TYPE_ARRAY);
    for (int i = 0; i < 4; i++) {
        g_value_set_int(&coordinate, bounds[i]);
        gst_value_array_append_value(&box, &coordinate);
    }
    gst_structure_take_value(s, "bounds", &box);
    g_value_unset(&coordinate);

    if (attach_frame) {
        GstCaps *caps = gst_pad_get_current_caps(GST_BASE_TRANSFORM_SINK_PAD(base));
        GstSample *sample = gst_sample_new(buffer, caps, &base->segment, NULL);
        gst_structure_set(s, "frame", GST_TYPE_SAMPLE, sample, NULL);
        gst_sample_unref(sample);
        if (caps) gst_caps_unref(caps);
    }
    gst_element_post_message(GST_ELEMENT(filter), gst_message_new_element(GST_OBJECT(filter), s));
}

static gboolean plugin_init(GstPlugin *plugin) {
    return gst_element_register(plugin, "barscope", GST_RANK_NONE, gst_barscope_get_type());
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, barscope,
    "Barcode scanning with a viewfinder, polygons and an overlay (ZBar, cairo, Swift)", plugin_init, "0.1.0",
    "LGPL", "barscope", "https://barscope.dev")

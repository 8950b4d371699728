// Measures, on one 1080p frame in memory, what the overlay costs each way Barscope could draw it:
//  A. cairooverlay's way (ours): I420 -> BGRx, draw with cairo onto the frame, BGRx -> I420 (for the encoder);
//  B. GstVideoOverlayComposition's way: draw with cairo onto a transparent ARGB layer, blend it into the I420
//     frame (no conversion of the frame).
// The picture drawn is the same: the viewfinder mask (the frame outside a 4:3 region darkened at 66 %), its
// rounded outline, and five code boxes with corner polygons. Prints milliseconds per frame, median of 100.
#include <cairo.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 1920, H = 1080, RUNS = 100 };

static double now_ms(void) { return g_get_monotonic_time() / 1000.0; }

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void draw(cairo_t *cr) {
    const double vx = 259, vy = 20, vw = 1402, vh = 1040, r = 16;
    // Mask: the frame minus the region, even-odd.
    cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD);
    cairo_rectangle(cr, 0, 0, W, H);
    cairo_rectangle(cr, vx, vy, vw, vh);
    cairo_set_source_rgba(cr, 0, 0, 0, 0.66);
    cairo_fill(cr);
    // Rounded outline.
    cairo_new_sub_path(cr);
    cairo_arc(cr, vx + vw - r, vy + r, r, -M_PI / 2, 0);
    cairo_arc(cr, vx + vw - r, vy + vh - r, r, 0, M_PI / 2);
    cairo_arc(cr, vx + r, vy + vh - r, r, M_PI / 2, M_PI);
    cairo_arc(cr, vx + r, vy + r, r, M_PI, 3 * M_PI / 2);
    cairo_close_path(cr);
    cairo_set_source_rgba(cr, 1, 1, 1, 1);
    cairo_set_line_width(cr, 2);
    cairo_stroke(cr);
    // Five codes: box and a lightly filled corner polygon.
    for (int i = 0; i < 5; i++) {
        double x = 300 + i * 250, y = 200 + i * 120, w = 200, h = 120;
        cairo_rectangle(cr, x - 12, y - 12, w + 24, h + 24);
        cairo_set_source_rgba(cr, 0, 1, 0, 1);
        cairo_stroke(cr);
        cairo_move_to(cr, x, y);
        cairo_line_to(cr, x, y + h);
        cairo_line_to(cr, x + w, y + h);
        cairo_line_to(cr, x + w, y);
        cairo_close_path(cr);
        cairo_set_source_rgba(cr, 0, 0, 1, 0.25);
        cairo_fill_preserve(cr);
        cairo_set_source_rgba(cr, 0, 0, 1, 1);
        cairo_stroke(cr);
    }
}

int main(int argc, char **argv) {
    gst_init(&argc, &argv);
    GstVideoInfo i420, bgrx, argb;
    gst_video_info_set_format(&i420, GST_VIDEO_FORMAT_I420, W, H);
    gst_video_info_set_format(&bgrx, GST_VIDEO_FORMAT_BGRx, W, H);
    gst_video_info_set_format(&argb, GST_VIDEO_FORMAT_BGRA, W, H);  // cairo's ARGB32 in memory on little-endian
    GstBuffer *yuv = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&i420), NULL);
    GstBuffer *rgb = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&bgrx), NULL);
    GstMapInfo m;
    gst_buffer_map(yuv, &m, GST_MAP_WRITE);
    for (gsize k = 0; k < m.size; k++) m.data[k] = (guint8)(k * 2654435761u >> 24);  // a busy picture
    gst_buffer_unmap(yuv, &m);
    GstVideoConverter *to_rgb = gst_video_converter_new(&i420, &bgrx, NULL);
    GstVideoConverter *to_yuv = gst_video_converter_new(&bgrx, &i420, NULL);
    double a[RUNS], b[RUNS], convert_in[RUNS], convert_out[RUNS], draw_rgb[RUNS];

    for (int run = 0; run < RUNS; run++) {
        GstVideoFrame fy, fr;
        gst_video_frame_map(&fy, &i420, yuv, GST_MAP_READWRITE);
        gst_video_frame_map(&fr, &bgrx, rgb, GST_MAP_READWRITE);
        double t0 = now_ms();
        gst_video_converter_frame(to_rgb, &fy, &fr);
        double t1 = now_ms();
        cairo_surface_t *s = cairo_image_surface_create_for_data(GST_VIDEO_FRAME_PLANE_DATA(&fr, 0), CAIRO_FORMAT_RGB24,
                                                                 W, H, GST_VIDEO_FRAME_PLANE_STRIDE(&fr, 0));
        cairo_t *cr = cairo_create(s);
        draw(cr);
        cairo_destroy(cr);
        cairo_surface_destroy(s);
        double t2 = now_ms();
        gst_video_converter_frame(to_yuv, &fr, &fy);
        double t3 = now_ms();
        gst_video_frame_unmap(&fr);
        gst_video_frame_unmap(&fy);
        a[run] = t3 - t0;
        convert_in[run] = t1 - t0;
        draw_rgb[run] = t2 - t1;
        convert_out[run] = t3 - t2;
    }
    for (int run = 0; run < RUNS; run++) {
        double t0 = now_ms();
        GstBuffer *layer = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&argb), NULL);
        GstMapInfo lm;
        gst_buffer_map(layer, &lm, GST_MAP_WRITE);
        memset(lm.data, 0, lm.size);  // transparent
        cairo_surface_t *s = cairo_image_surface_create_for_data(lm.data, CAIRO_FORMAT_ARGB32, W, H, W * 4);
        cairo_t *cr = cairo_create(s);
        draw(cr);
        cairo_destroy(cr);
        cairo_surface_destroy(s);
        gst_buffer_unmap(layer, &lm);
        gst_buffer_add_video_meta(layer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_OVERLAY_COMPOSITION_FORMAT_RGB, W, H);
        GstVideoOverlayRectangle *rect = gst_video_overlay_rectangle_new_raw(
            layer, 0, 0, W, H, GST_VIDEO_OVERLAY_FORMAT_FLAG_PREMULTIPLIED_ALPHA);
        GstVideoOverlayComposition *comp = gst_video_overlay_composition_new(rect);
        GstVideoFrame fy;
        gst_video_frame_map(&fy, &i420, yuv, GST_MAP_READWRITE);
        gst_video_overlay_composition_blend(comp, &fy);
        gst_video_frame_unmap(&fy);
        gst_video_overlay_composition_unref(comp);
        gst_video_overlay_rectangle_unref(rect);
        gst_buffer_unref(layer);
        b[run] = now_ms() - t0;
    }
    qsort(a, RUNS, sizeof a[0], compare);
    qsort(b, RUNS, sizeof b[0], compare);
    qsort(convert_in, RUNS, sizeof a[0], compare);
    qsort(draw_rgb, RUNS, sizeof a[0], compare);
    qsort(convert_out, RUNS, sizeof a[0], compare);
    printf("1080p overlay, median of %d, ms per frame:\n", RUNS);
    printf("  A. cairooverlay on BGRx: %.2f (I420->BGRx %.2f, draw %.2f, BGRx->I420 %.2f)\n", a[RUNS / 2],
           convert_in[RUNS / 2], draw_rgb[RUNS / 2], convert_out[RUNS / 2]);
    printf("  B. ARGB layer + GstVideoOverlayComposition blend into I420: %.2f\n", b[RUNS / 2]);
    return 0;
}

#include "CTestRTSPServer.h"

// The valve of the newest media made by a factory prepared with bs_test_rtsp_track_valves (one server per test,
// so one pointer under a lock is enough).
static GMutex lock;
static GstElement *newest_valve = NULL;

static void on_media_configure(GstRTSPMediaFactory *factory, GstRTSPMedia *media, gpointer data) {
    (void)factory;
    (void)data;
    GstElement *bin = gst_rtsp_media_get_element(media);
    GstElement *valve = gst_bin_get_by_name(GST_BIN(bin), "stall");
    gst_object_unref(bin);
    g_mutex_lock(&lock);
    if (newest_valve) gst_object_unref(newest_valve);
    newest_valve = valve;  // keeps the reference gst_bin_get_by_name gave
    g_mutex_unlock(&lock);
}

void bs_test_rtsp_track_valves(GstRTSPMediaFactory *factory) {
    g_signal_connect(factory, "media-configure", G_CALLBACK(on_media_configure), NULL);
}

int bs_test_rtsp_stall_newest(void) {
    g_mutex_lock(&lock);
    int found = newest_valve != NULL;
    if (found) g_object_set(newest_valve, "drop", TRUE, NULL);
    g_mutex_unlock(&lock);
    return found;
}

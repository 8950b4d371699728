// librdkafka: Kafka publishing of events (`--publish kafka://...`), and its mock cluster for the tests.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

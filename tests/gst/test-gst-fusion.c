#include "gst-test-util.h"
static Suite *
m2i_fusion_suite (void)
{
  Suite *s = suite_create ("m2i-fusion");
  return s;
}
GST_CHECK_MAIN (m2i_fusion);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A shared library that is not a custom-op plugin (it lacks
 * m2i_op_plugin_register): loading it must fail with a clear error. */
int m2i_test_not_a_plugin (void);

int
m2i_test_not_a_plugin (void)
{
  return 42;
}

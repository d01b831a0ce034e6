/* config.h for e2e/tlshd/build.sh, written by hand in place of autotools:
 * ktls-utils 0.11 against Debian 12 (gnutls 3.7.9, which has all three). */
#define PACKAGE_STRING "ktls-utils 0.11"
#define PACKAGE_VERSION "0.11"
#define _GNU_SOURCE 1
#define HAVE_GNUTLS_TRANSPORT_IS_KTLS_ENABLED 1
#define HAVE_GNUTLS_PROTOCOL_SET_ENABLED 1
#define HAVE_GNUTLS_GET_SYSTEM_CONFIG_FILE 1

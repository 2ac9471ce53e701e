// SPDX-License-Identifier: GPL-2.0
/*
 * The SDR SDK's calls with the SDK's own types: each is assigned to a
 * pointer declared here with the prototype the SDK's header gives it, so
 * a parameter or return type that differs in sdr's sdr.h / sdr_mr.h
 * fails this file's -Werror build; main() then calls each through its
 * pointer (with arguments that fail cleanly: no device is needed) and the
 * program links against libsdr.so, so a call the library does not export
 * fails the link.  Built with the SDK's headers alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <sdr.h>
#include <sdr_mr.h>

static struct sdr_context *(*p_context_create)(const char *,
					       struct sdr_dev_attr *) =
	sdr_context_create;
static int (*p_context_destroy)(struct sdr_context *) = sdr_context_destroy;
static struct sdr_qp *(*p_qp_create)(struct sdr_context *,
				     struct sdr_qp_attr *) = sdr_qp_create;
static int (*p_qp_destroy)(struct sdr_qp *) = sdr_qp_destroy;
static int (*p_qp_info_size_get)(struct sdr_qp *, size_t *) =
	sdr_qp_info_size_get;
static int (*p_qp_info_get)(struct sdr_qp *, void *) = sdr_qp_info_get;
static int (*p_qp_connect)(struct sdr_qp *, void *) = sdr_qp_connect;
static int (*p_recv_post)(struct sdr_qp *, struct sdr_recv_wr *,
			  struct sdr_recv_handle **) = sdr_recv_post;
static int (*p_recv_imm_get)(struct sdr_recv_handle *, uint32_t *) =
	sdr_recv_imm_get;
static int (*p_recv_bitmap_get)(struct sdr_recv_handle *, uint8_t **,
				size_t *) = sdr_recv_bitmap_get;
static int (*p_recv_bitmap_chunk_expand)(struct sdr_recv_handle *, uint32_t,
					 uint64_t *) =
	sdr_recv_bitmap_chunk_expand;
static int (*p_recv_complete)(struct sdr_recv_handle *) = sdr_recv_complete;
static int (*p_send_post)(struct sdr_qp *, struct sdr_send_wr *,
			  struct sdr_send_handle **) = sdr_send_post;
static int (*p_streaming_send_start)(struct sdr_qp *,
				     struct sdr_send_start_wr *,
				     struct sdr_send_handle **) =
	sdr_streaming_send_start;
static int (*p_streaming_send_continue)(struct sdr_send_handle *,
					struct sdr_send_continue_wr *) =
	sdr_streaming_send_continue;
static int (*p_streaming_send_end)(struct sdr_send_handle *) =
	sdr_streaming_send_end;
static int (*p_send_poll)(struct sdr_send_handle *, int *,
			  struct sdr_send_status *) = sdr_send_poll;
static struct sdr_mr *(*p_mr_reg)(struct sdr_context *, void *, size_t,
				  enum sdr_access_flags) = sdr_mr_reg;
static int (*p_mr_dereg)(struct sdr_mr *) = sdr_mr_dereg;
static int (*p_mr_lkey_get)(struct sdr_mr *, uint32_t *) = sdr_mr_lkey_get;
static int (*p_mr_rkey_get)(struct sdr_mr *, uint32_t *) = sdr_mr_rkey_get;

static int n, failed;

static void point(int ok, const char *what)
{
	n++;
	failed += !ok;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", n, what);
}

/* An SDK call given nothing to work on: SDR_ERROR and EINVAL. */
#define EINVAL_OF(call) ((errno = 0, (call)) == SDR_ERROR && errno == EINVAL)

int main(int argc, char **argv)
{
	struct sdr_dev_attr da = { .num_channels = 1, .log_max_qps = 31 };
	uint32_t key = 0, imm = 0;
	uint64_t exp[1];
	uint8_t *bits;
	size_t sz;
	int done;

	if (argc > 1)		/* points numbered on from check-exports' */
		n = atoi(argv[1]);
	/* the SDK's constants, as its header numbers them */
	point(SDR_SUCCESS == 0 && SDR_ERROR == 1 && SDR_RETRY == 2 &&
	      SDR_MTU_64 == 0 && SDR_MTU_4096 == 6 && SDR_WR_WRITE == 0 &&
	      SDR_WR_WRITE_WITH_IMM == 1 && SDR_ACCESS_REMOTE_WRITE == 0,
	      "return codes, MTUs, opcodes and access flags have the SDK's values");
	errno = 0;
	point(!p_context_create("sdk-api-no-such-device", &da) &&
	      errno == EINVAL, "sdr_context_create: log_max_qps 31 -> NULL, EINVAL");
	point(EINVAL_OF(p_context_destroy(NULL)), "sdr_context_destroy(NULL)");
	errno = 0;
	point(!p_qp_create(NULL, NULL) && errno == EINVAL, "sdr_qp_create(NULL)");
	point(EINVAL_OF(p_qp_destroy(NULL)), "sdr_qp_destroy(NULL)");
	point(EINVAL_OF(p_qp_info_size_get(NULL, &sz)), "sdr_qp_info_size_get(NULL)");
	point(EINVAL_OF(p_qp_info_get(NULL, &sz)), "sdr_qp_info_get(NULL)");
	point(EINVAL_OF(p_qp_connect(NULL, &sz)), "sdr_qp_connect(NULL)");
	point(EINVAL_OF(p_recv_post(NULL, NULL, NULL)), "sdr_recv_post(NULL)");
	point(EINVAL_OF(p_recv_imm_get(NULL, &imm)), "sdr_recv_imm_get(NULL)");
	point(EINVAL_OF(p_recv_bitmap_get(NULL, &bits, &sz)),
	      "sdr_recv_bitmap_get(NULL)");
	point(EINVAL_OF(p_recv_bitmap_chunk_expand(NULL, 0, exp)),
	      "sdr_recv_bitmap_chunk_expand(NULL)");
	point(EINVAL_OF(p_recv_complete(NULL)), "sdr_recv_complete(NULL)");
	point(EINVAL_OF(p_send_post(NULL, NULL, NULL)), "sdr_send_post(NULL)");
	point(EINVAL_OF(p_streaming_send_start(NULL, NULL, NULL)),
	      "sdr_streaming_send_start(NULL)");
	point(EINVAL_OF(p_streaming_send_continue(NULL, NULL)),
	      "sdr_streaming_send_continue(NULL)");
	point(EINVAL_OF(p_streaming_send_end(NULL)),
	      "sdr_streaming_send_end(NULL)");
	point(EINVAL_OF(p_send_poll(NULL, &done, NULL)), "sdr_send_poll(NULL)");
	errno = 0;
	point(!p_mr_reg(NULL, &key, sizeof(key), SDR_ACCESS_REMOTE_WRITE) &&
	      errno == EINVAL, "sdr_mr_reg(NULL)");
	point(EINVAL_OF(p_mr_dereg(NULL)), "sdr_mr_dereg(NULL)");
	point(EINVAL_OF(p_mr_lkey_get(NULL, &key)), "sdr_mr_lkey_get(NULL)");
	point(EINVAL_OF(p_mr_rkey_get(NULL, &key)), "sdr_mr_rkey_get(NULL)");
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}

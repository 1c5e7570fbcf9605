/* mjpeg_feed: plays a stream of concatenated JPEGs (ffmpeg -f mjpeg) into a
 * v4l2loopback output node, like a USB webcam that sends MJPEG, optionally
 * with the camera faults vcapd must survive: frames without Huffman tables,
 * corrupt, truncated and empty frames. Also answers, for a test, whether a
 * JPEG file is byte for byte one of the stream's frames.
 *
 *   mjpeg_feed -i in.mjpeg -d /dev/video20 [-r fps (may be < 1)] [-n frames] [--strip-dht]
 *              [--corrupt N] [--truncate N] [--empty N]      (every Nth frame)
 *              [--hold]  (after the last frame keep the device open, idle)
 *   mjpeg_feed -i in.mjpeg --match FILE [--strip-dht] [--add-dht] [--rotate R --flip F]
 *       FILE: one JPEG, concatenated JPEGs or a saved multipart /stream; every
 *       part must be byte for byte a stream frame after the edits (strip DHT,
 *       add DHT, lossless vc_jpeg_transform); prints "match: N of M parts..."
 *   mjpeg_feed -i in.mjpeg --info
 *   mjpeg_feed -i in.mjpeg --extract K out.jpg [--strip-dht] [--add-dht]
 *       writes frame K after the edits (strip first, then add)
 *   mjpeg_feed -i in.mjpeg --grab /dev/video20 -n 20 [--strip-dht] [--lag MS]
 *       captures 20 buffers (MMAP streaming) and counts the valid JPEGs
 *       (vc_jpeg_parse), the invalid ones, and the valid ones that are byte
 *       for byte a frame of in.mjpeg (after --strip-dht when given). Copies
 *       the producer may have overwritten while they were taken (the
 *       daemon's check, v4l2_copy_overtaken) are counted apart as
 *       "overtaken", buffers not filled since our REQBUFS (v4l2_copy_stale)
 *       as "stale"; --lag waits MS between DQBUF and the copy to provoke
 *       overtaking.
 *
 * Prints one line per fault kind at the end ("fed 150 frames, 10 corrupt...").
 * Exit 0, 1 on a failed match, 2 on usage or I/O errors. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "common/jpeg.h"
#include "server/capture/v4l2_int.h"

struct frames {
	uint8_t *buf;
	size_t len;
	size_t n, off[4096], size[4096];
};

static int load(const char *path, struct frames *fr)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 20;

	if (!f) {
		perror(path);
		return -1;
	}
	fr->buf = malloc(cap);
	fr->len = 0;
	for (;;) {
		if (fr->len == cap)
			fr->buf = realloc(fr->buf, cap *= 2);
		size_t r = fread(fr->buf + fr->len, 1, cap - fr->len, f);

		if (r == 0)
			break;
		fr->len += r;
	}
	fclose(f);
	/* Split: each JPEG ends at its EOI, as vc_jpeg_parse measures it. */
	fr->n = 0;
	for (size_t pos = 0; pos < fr->len && fr->n < 4096;) {
		struct vc_jpeg_info info;

		if (vc_jpeg_parse(fr->buf + pos, fr->len - pos, &info) < 0) {
			fprintf(stderr, "%s: frame %zu at %zu does not parse\n", path, fr->n, pos);
			return -1;
		}
		fr->off[fr->n] = pos;
		fr->size[fr->n++] = info.size;
		pos += info.size;
	}
	return fr->n ? 0 : -1;
}

/* Index of the frame of fr equal to buf[0..len) (after stripping DHT when
 * strip), or -1. */
static long find_frame(const struct frames *fr, const uint8_t *buf, size_t len, int strip,
		       uint8_t *tmp, size_t tmpcap)
{
	for (size_t i = 0; i < fr->n; i++) {
		const uint8_t *f = fr->buf + fr->off[i];
		size_t fl = fr->size[i], l2;

		if (strip && vc_jpeg_strip_dht(f, fl, tmp, tmpcap, &l2) == 0) {
			f = tmp;
			fl = l2;
		}
		if (fl == len && !memcmp(f, buf, len))
			return (long)i;
	}
	return -1;
}

/* Opens dev and queues its mmap'd buffers: 0, or -errno with nothing left
 * open or mapped. */
static int grab_setup(const char *dev, int *fdp, struct v4l2_requestbuffers *rb, void *map[8],
		      size_t maplen[8], struct v4l2_record at_start[8])
{
	int fd = open(dev, O_RDWR), err = 0;
	unsigned mapped = 0;

	if (fd < 0)
		return -errno;
	memset(rb, 0, sizeof(*rb));
	rb->count = 4;
	rb->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	rb->memory = V4L2_MEMORY_MMAP;
	if (ioctl(fd, VIDIOC_REQBUFS, rb) < 0 || rb->count < 1 || rb->count > 8)
		err = errno ? -errno : -EINVAL;
	for (unsigned i = 0; !err && i < rb->count; i++) {
		struct v4l2_buffer b;

		memset(&b, 0, sizeof(b));
		b.type = rb->type;
		b.memory = rb->memory;
		b.index = i;
		if (ioctl(fd, VIDIOC_QUERYBUF, &b) < 0) {
			err = -errno;
			break;
		}
		maplen[i] = b.length;
		at_start[i] = (struct v4l2_record){ b.timestamp, b.sequence, b.bytesused };
		map[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
		if (map[i] == MAP_FAILED) {
			err = -errno;
			break;
		}
		mapped++;
		if (ioctl(fd, VIDIOC_QBUF, &b) < 0)
			err = -errno;
	}
	if (err) {
		for (unsigned i = 0; i < mapped; i++)
			munmap(map[i], maplen[i]);
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

/* The daemon's copy-out check (server/capture/v4l2_copyout.c) on a raw fd: may the
 * producer have written into the frame filled at seq while we copied it? */
static int copy_overtaken(int fd, unsigned count, uint32_t seq)
{
	uint32_t seqs[8];

	for (unsigned i = 0; i < count && i < 8; i++) {
		struct v4l2_buffer q;

		memset(&q, 0, sizeof(q));
		q.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		q.memory = V4L2_MEMORY_MMAP;
		q.index = i;
		if (ioctl(fd, VIDIOC_QUERYBUF, &q) < 0)
			return 1;
		seqs[i] = q.sequence;
	}
	return v4l2_copy_overtaken(seq, seqs, count < 8 ? count : 8);
}

static int grab(const struct frames *fr, const char *dev, long n, int strip, size_t maxsz,
		long lag_ms)
{
	int fd = -1, ret = -EINVAL;
	struct v4l2_requestbuffers rb;
	void *map[8];
	size_t maplen[8];
	uint8_t *tmp = malloc(maxsz + 4 * VC_JPEG_DHT_BYTES);
	long got = 0, valid = 0, invalid = 0, matched = 0, nodht = 0, gaps = 0, overtaken = 0;
	long stale = 0;
	struct v4l2_record at_start[8];
	long long last_seq = -1;
	double t_first = 0, t_last = 0;

	/* v4l2loopback's capture side refuses buffers (EINVAL) until its
	 * producer has set a format and started: under emulation that can take
	 * longer than the caller waited, so retry for up to 10 s. */
	for (int tries = 0; tries < 50; tries++) {
		ret = grab_setup(dev, &fd, &rb, map, maplen, at_start);
		if (ret != -EINVAL)
			break;
		nanosleep(&(struct timespec){ 0, 200000000 }, NULL);
	}
	if (ret < 0) {
		fprintf(stderr, "%s: capture set-up: %s\n", dev, strerror(-ret));
		free(tmp);
		return 2;
	}
	size_t copy_len = 0;
	for (unsigned i = 0; i < rb.count; i++)
		copy_len = maplen[i] > copy_len ? maplen[i] : copy_len;
	uint8_t *copy = malloc(copy_len ? copy_len : 1);
	if (!copy || !tmp) {
		fprintf(stderr, "grab: out of memory\n");
		return 2;
	}
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	if (ioctl(fd, VIDIOC_STREAMON, &type) < 0) {
		perror("VIDIOC_STREAMON");
		return 2;
	}
	while (got < n) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		struct v4l2_buffer b;
		struct vc_jpeg_info info;

		if (poll(&pfd, 1, 10000) <= 0) {
			fprintf(stderr, "grab: no frame for 10 s\n");
			break;
		}
		memset(&b, 0, sizeof(b));
		b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b.memory = V4L2_MEMORY_MMAP;
		if (ioctl(fd, VIDIOC_DQBUF, &b) < 0) {
			perror("VIDIOC_DQBUF");
			break;
		}
		size_t used = b.bytesused <= maplen[b.index] ? b.bytesused : maplen[b.index];
		double ts = (double)b.timestamp.tv_sec + b.timestamp.tv_usec * 1e-6;

		if (last_seq >= 0 && (long long)b.sequence != last_seq + 1)
			gaps++;
		last_seq = b.sequence;
		if (!got)
			t_first = ts;
		t_last = ts;
		/* v4l2loopback may write the next frames into a buffer we hold
		 * (it does not wait for the reader): copy it out and give it back
		 * at once, then look at the copy, so a slow (emulated) match does
		 * not read a torn frame; a copy the producer may have overtaken
		 * (reader a ring behind) is what the daemon drops: counted apart. */
		uint8_t *p = copy;

		if (lag_ms > 0)
			nanosleep(&(struct timespec){ lag_ms / 1000, (lag_ms % 1000) * 1000000L }, NULL);
		memcpy(copy, map[b.index], used);
		int torn = copy_overtaken(fd, rb.count, b.sequence);
		struct v4l2_record rec = { b.timestamp, b.sequence, b.bytesused };
		int old = b.index < 8 && v4l2_copy_stale(&rec, &at_start[b.index]);
		ioctl(fd, VIDIOC_QBUF, &b);
		got++;
		if (old) {
			stale++;
		} else if (torn) {
			overtaken++;
		} else if (vc_jpeg_parse(p, used, &info) == 0) {
			valid++;
			nodht += !info.has_dht;
			if (find_frame(fr, p, info.size, strip, tmp, maxsz + 4 * VC_JPEG_DHT_BYTES) >= 0)
				matched++;
		} else {
			invalid++;
		}
	}
	ioctl(fd, VIDIOC_STREAMOFF, &type);
	printf("grab: %ld frames, %ld valid, %ld invalid, %ld matched, %ld without DHT, "
	       "%ld overtaken, %ld stale; %ld sequence gaps (last %lld), timestamps span %.2f s\n",
	       got, valid, invalid, matched, nodht, overtaken, stale, gaps, last_seq,
	       t_last - t_first);
	for (unsigned i = 0; i < rb.count; i++)
		munmap(map[i], maplen[i]);
	close(fd);
	free(copy);
	free(tmp);
	return got == n ? 0 : 2;
}

static int every(long n, size_t i)
{
	return n > 0 && (i + 1) % (size_t)n == 0;
}

int main(int argc, char **argv)
{
	const char *in = NULL, *dev = NULL, *match = NULL, *grab_dev = NULL, *extract = NULL;
	long extract_k = 0;
	int rot = 0, flip = 0;
	double fps = 15;
	long count = 0, corrupt = 0, truncate_n = 0, empty = 0, lag_ms = 0;
	int strip = 0, add = 0, info_only = 0, hold = 0;
	struct frames fr;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-i") && v)
			in = argv[++i];
		else if (!strcmp(a, "-d") && v)
			dev = argv[++i];
		else if (!strcmp(a, "--extract") && v && i + 2 < argc) {
			extract_k = atol(argv[++i]);
			extract = argv[++i];
		} else if (!strcmp(a, "--rotate") && v)
			rot = atoi(argv[++i]);
		else if (!strcmp(a, "--flip") && v)
			flip = atoi(argv[++i]);
		else if (!strcmp(a, "--grab") && v)
			grab_dev = argv[++i];
		else if (!strcmp(a, "--match") && v)
			match = argv[++i];
		else if (!strcmp(a, "-r") && v)
			fps = atof(argv[++i]);
		else if (!strcmp(a, "-n") && v)
			count = atol(argv[++i]);
		else if (!strcmp(a, "--corrupt") && v)
			corrupt = atol(argv[++i]);
		else if (!strcmp(a, "--truncate") && v)
			truncate_n = atol(argv[++i]);
		else if (!strcmp(a, "--lag") && v)
			lag_ms = atol(argv[++i]);
		else if (!strcmp(a, "--empty") && v)
			empty = atol(argv[++i]);
		else if (!strcmp(a, "--strip-dht"))
			strip = 1;
		else if (!strcmp(a, "--hold"))
			hold = 1;
		else if (!strcmp(a, "--add-dht"))
			add = 1;
		else if (!strcmp(a, "--info"))
			info_only = 1;
		else {
			fprintf(stderr, "usage: see the comment atop tests/tools/mjpeg_feed.c\n");
			return 2;
		}
	}
	if (!in || load(in, &fr) < 0)
		return 2;

	size_t maxsz = 0;
	for (size_t i = 0; i < fr.n; i++)
		if (fr.size[i] > maxsz)
			maxsz = fr.size[i];
	uint8_t *tmp = malloc(maxsz + 2 * VC_JPEG_DHT_BYTES);
	uint8_t *tmp2 = malloc(maxsz + 2 * VC_JPEG_DHT_BYTES);
	struct vc_jpeg_info info;
	vc_jpeg_parse(fr.buf, fr.size[0], &info);

	if (info_only) {
		printf("%zu frames %ux%u has_dht %d max %zu bytes\n", fr.n, info.width, info.height,
		       info.has_dht, maxsz);
		return 0;
	}
	if (grab_dev)
		return grab(&fr, grab_dev, count ? count : 10, strip, maxsz, lag_ms);
	if (extract) {
		const uint8_t *f = fr.buf + fr.off[extract_k % (long)fr.n];
		size_t fl = fr.size[extract_k % (long)fr.n], len;
		FILE *o = fopen(extract, "wb");

		if (strip && vc_jpeg_strip_dht(f, fl, tmp, maxsz, &len) == 0) {
			f = tmp;
			fl = len;
		}
		if (add && vc_jpeg_add_dht(f, fl, tmp2, maxsz + 2 * VC_JPEG_DHT_BYTES, &len) == 0) {
			f = tmp2;
			fl = len;
		}
		if (!o || fwrite(f, 1, fl, o) != fl || fclose(o) != 0) {
			perror(extract);
			return 2;
		}
		return 0;
	}
	if (match) { /* are the file's JPEGs frames of the stream (after the same edits)? */
		FILE *mf = fopen(match, "rb");
		uint8_t *mb = malloc(64u << 20);
		size_t ml = mf ? fread(mb, 1, 64u << 20, mf) : 0, parts = 0, ok = 0, bad = 0, cut = 0;
		struct vc_jpeg *j = vc_jpeg_new();
		uint8_t *tmp3 = malloc(2 * maxsz + 65536);

		if (mf)
			fclose(mf);
		/* A JPEG file, concatenated JPEGs, or a multipart stream: every SOI
		 * that starts the file or follows a blank line starts a part. */
		for (size_t pos = 0; pos + 2 <= ml; pos++) {
			if (mb[pos] != 0xFF || mb[pos + 1] != 0xD8)
				continue;
			if (pos != 0 && !(pos >= 4 && !memcmp(mb + pos - 4, "\r\n\r\n", 4)) &&
			    !(pos >= 2 && mb[pos - 2] == 0xFF && mb[pos - 1] == 0xD9))
				continue;
			struct vc_jpeg_info mi;

			parts++;
			if (vc_jpeg_parse(mb + pos, ml - pos, &mi) < 0) {
				/* The last part of a saved stream is usually cut where the
				 * client stopped reading: not the server's fault. */
				if (!memmem(mb + pos + 2, ml - pos - 2, "\r\n\r\n\xff\xd8", 6) &&
				    !memmem(mb + pos + 2, ml - pos - 2, "\xff\xd9\xff\xd8", 4)) {
					parts--;
					cut++;
					break;
				}
				bad++;
				continue;
			}
			size_t before = ok, best = 0, best_len = 0, best_same = 0;

			for (size_t i = 0; i < fr.n; i++) {
				const uint8_t *f = fr.buf + fr.off[i];
				size_t fl = fr.size[i], len;
				uint32_t ow, oh;

				if (strip && vc_jpeg_strip_dht(f, fl, tmp, maxsz, &len) == 0) {
					f = tmp;
					fl = len;
				}
				if (add && vc_jpeg_add_dht(f, fl, tmp2, maxsz + 2 * VC_JPEG_DHT_BYTES, &len) == 0) {
					fl = len;
					f = tmp2;
				}
				if ((rot || flip) && vc_jpeg_transform(j, f, fl, rot, flip, tmp3,
								       2 * maxsz + 65536, &len, &ow, &oh) == 0) {
					f = tmp3;
					fl = len;
				}
				if (fl == mi.size && !memcmp(f, mb + pos, fl)) {
					ok++;
					break;
				}
				size_t same = 0; /* for the report below */
				while (same < fl && same < mi.size && f[same] == mb[pos + same])
					same++;
				if (same > best_same) {
					best_same = same;
					best = i;
					best_len = fl;
				}
			}
			if (ok == before) /* say what it is, so a failure can be understood */
				fprintf(stderr, "match: part %zu at byte %zu (%zu bytes, valid JPEG) is no "
					"stream frame; closest: frame %zu (%zu bytes), same for the "
					"first %zu bytes\n", parts, pos, (size_t)mi.size, best, best_len,
					best_same);
			pos += mi.size - 1;
		}
		printf("match: %zu of %zu parts are stream frames, %zu invalid%s\n", ok, parts, bad,
		       cut ? " (last part cut by the client, ignored)" : "");
		return parts > 0 && ok == parts ? 0 : 1;
	}
	if (!dev)
		return 2;
	int fd = open(dev, O_RDWR);
	if (fd < 0) {
		perror(dev);
		return 2;
	}
	struct v4l2_format f;
	memset(&f, 0, sizeof(f));
	f.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	f.fmt.pix.width = info.width;
	f.fmt.pix.height = info.height;
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_MJPEG;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	f.fmt.pix.sizeimage = (uint32_t)(maxsz + 4 * VC_JPEG_DHT_BYTES);
	if (ioctl(fd, VIDIOC_S_FMT, &f) < 0) {
		perror("VIDIOC_S_FMT");
		return 2;
	}
	size_t fed = 0, n_corrupt = 0, n_trunc = 0, n_empty = 0;
	long long period_ns = fps > 0 ? (long long)(1e9 / fps) : 0;
	struct timespec period = { (time_t)(period_ns / 1000000000), (long)(period_ns % 1000000000) };
	for (size_t i = 0; count == 0 || (long)i < count; i++) {
		const uint8_t *src = fr.buf + fr.off[i % fr.n];
		size_t len = fr.size[i % fr.n];

		if (strip) {
			size_t l2;

			if (vc_jpeg_strip_dht(src, len, tmp, maxsz, &l2) == 0)
				len = l2;
			else
				memcpy(tmp, src, len);
		} else {
			memcpy(tmp, src, len);
		}
		if (every(empty, i)) {
			len = 0;
			n_empty++;
		} else if (every(truncate_n, i)) {
			len /= 2;
			n_trunc++;
		} else if (every(corrupt, i)) {
			/* garbage over the middle of the entropy data and a broken marker */
			for (size_t k = len / 2; k < len / 2 + 64 && k + 2 < len; k++)
				tmp[k] = (uint8_t)(k * 37);
			tmp[2] = 0x00;
			n_corrupt++;
		}
		/* v4l2loopback takes a write() as one frame of that many bytes; an
		 * empty frame is one zero byte (a zero-length write is not a frame). */
		if (len == 0) {
			tmp[0] = 0;
			len = 1;
		}
		if (write(fd, tmp, len) < 0) {
			perror("write");
			return 2;
		}
		fed++;
		nanosleep(&period, NULL);
	}
	printf("fed %zu frames: %zu corrupt, %zu truncated, %zu empty\n", fed, n_corrupt, n_trunc,
	       n_empty);
	fflush(stdout);
	if (hold) /* a producer that stalls with the device open: its frames stay */
		for (;;)
			pause();
	close(fd);
	return 0;
}

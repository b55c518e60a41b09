/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc text parsers (lib/procfs.c), on saved and hostile texts. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"
#include "internal.h"

static void test_parse_int(void)
{
	int v = 42;

	CHECK(rv_parse_int("0", &v) == 0 && v == 0, "0");
	CHECK(rv_parse_int("2147483647", &v) == 0 && v == 2147483647, "INT_MAX");
	v = 7;
	CHECK(rv_parse_int("2147483648", &v) == -ERANGE && v == 7, "overflow untouched");
	CHECK(rv_parse_int("99999999999999999999999", &v) == -ERANGE, "u64 overflow");
	CHECK(rv_parse_int("", &v) == -EINVAL, "empty");
	CHECK(rv_parse_int("-1", &v) == -EINVAL, "negative");
	CHECK(rv_parse_int(" 1", &v) == -EINVAL, "leading space");
	CHECK(rv_parse_int("12a", &v) == -EINVAL, "trailing junk");
	CHECK(rv_parse_int(".", &v) == -EINVAL && rv_parse_int("..", &v) == -EINVAL, "dots");
	CHECK(rv_parse_int(NULL, &v) == -EINVAL, "NULL");
	CHECK(v == 7, "untouched on failure");
}

#define STAT_TAIL                                                                                  \
	" 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 3 0 9999 1000 200 "                      \
	"18446744073709551615\n"

static void test_parse_stat(void)
{
	struct rv_proc_stat st;

	CHECK(rv_parse_stat("1234 (bash) S" STAT_TAIL, &st) == 0, "plain");
	CHECK(st.pid == 1234 && strcmp(st.comm, "bash") == 0 && st.state == 'S' && st.ppid == 1,
	      "fields: %d %s %c %d", st.pid, st.comm, st.state, st.ppid);
	CHECK(st.flags == 4194560 && st.num_threads == 3, "flags %u threads %d", st.flags,
	      st.num_threads);

	CHECK(rv_parse_stat("7 (a) b) S" STAT_TAIL, &st) == 0 && strcmp(st.comm, "a) b") == 0,
	      "')' in comm: '%s'", st.comm);
	CHECK(rv_parse_stat("7 (x) (y) Z" STAT_TAIL, &st) == 0 && strcmp(st.comm, "x) (y") == 0 &&
		  st.state == 'Z',
	      "') (' in comm: '%s'", st.comm);
	CHECK(rv_parse_stat("7 ( sp ace ) R" STAT_TAIL, &st) == 0 &&
		  strcmp(st.comm, " sp ace ") == 0 && st.state == 'R',
	      "spaces: '%s'", st.comm);
	CHECK(rv_parse_stat("7 (new\nline)) T" STAT_TAIL, &st) == 0 &&
		  strcmp(st.comm, "new\nline)") == 0 && st.state == 'T',
	      "newline: '%s'", st.comm);
	CHECK(rv_parse_stat("7 () S" STAT_TAIL, &st) == 0 && st.comm[0] == '\0', "empty comm");
	/* A kernel thread: PF_KTHREAD (0x00200000) in field 9. */
	CHECK(rv_parse_stat("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0 "
			    "18446744073709551615\n",
			    &st) == 0 &&
		  (st.flags & 0x00200000),
	      "kthread flags %u", st.flags);

	st.pid = 99;
	CHECK(rv_parse_stat("", &st) == -EINVAL, "empty");
	CHECK(rv_parse_stat("1234 (bash", &st) == -EINVAL, "no ')'");
	CHECK(rv_parse_stat("1234 bash) S" STAT_TAIL, &st) == -EINVAL, "no '('");
	CHECK(rv_parse_stat("1234 (bash) S", &st) == -EINVAL, "missing fields");
	CHECK(rv_parse_stat("1234 (bash) S 1 2 3 4 5 6", &st) == -EINVAL, "missing flags onwards");
	CHECK(rv_parse_stat("1234 (bash) S 1 1 1 0 -1 x 1 1 1 1 1 1 1 1 1 1 1", &st) == -EINVAL,
	      "junk in a field");
	CHECK(rv_parse_stat("99999999999 (bash) S" STAT_TAIL, &st) == -ERANGE, "pid overflow");
	CHECK(rv_parse_stat("1 (bash) S 99999999999999999999999 1 1 0 -1 0 1 1 1 1 1 1 1 1 1 1 1",
			    &st) == -ERANGE,
	      "ppid overflow");
	CHECK(rv_parse_stat(NULL, &st) == -EINVAL, "NULL");
	CHECK(st.pid == 99, "untouched on failure");
}

static void test_parse_status(void)
{
	static const char text[] = "Name:\tevil\\nname\n"
				   "Umask:\t0022\n"
				   "State:\tt (tracing stop)\n"
				   "Tgid:\t4242\n"
				   "Ngid:\t0\n"
				   "Pid:\t4242\n"
				   "PPid:\t1\n"
				   "TracerPid:\t77\n"
				   "Uid:\t1000\t0\t1000\t1000\n"
				   "Gid:\t1000\t1000\t1000\t1000\n"
				   "NSpid:\t4242\t12\t1\n"
				   "Seccomp:\t2\n"
				   "Seccomp_filters:\t1\n";
	struct rv_proc_status st;

	CHECK(rv_parse_status(text, &st) == 0, "parse");
	CHECK(st.ruid == 1000 && st.euid == 0, "uids %u %u", st.ruid, st.euid);
	CHECK(st.state == 't' && st.tgid == 4242 && st.tracer == 77 && st.seccomp == 2,
	      "state %c tgid %d tracer %d seccomp %d", st.state, st.tgid, st.tracer, st.seccomp);
	CHECK(st.nspid_inner == 1, "nspid %d", st.nspid_inner);

	/* Without Seccomp/TracerPid/NSpid (old kernel, !CONFIG_SECCOMP). */
	CHECK(rv_parse_status("State:\tS (sleeping)\nTgid:\t5\nUid:\t0\t0\t0\t0\n", &st) == 0 &&
		  st.seccomp == 0 && st.tracer == 0 && st.nspid_inner == 5,
	      "optional fields");
	st.tgid = 31;
	CHECK(rv_parse_status("State:\tS (sleeping)\nTgid:\t5\n", &st) == -EINVAL, "no Uid");
	CHECK(rv_parse_status("Tgid:\t5\nUid:\t0\t0\t0\t0\n", &st) == -EINVAL, "no State");
	CHECK(rv_parse_status("State:\tS\nUid:\t0\t0\t0\t0\n", &st) == -EINVAL, "no Tgid");
	CHECK(rv_parse_status("State:\tS\nTgid:\t5\nUid:\tx\n", &st) == -EINVAL, "bad Uid");
	CHECK(rv_parse_status("State:\tS\nTgid:\t99999999999\nUid:\t0\t0\n", &st) == -ERANGE,
	      "overflow");
	/* A key in the middle of a line is not a key. */
	CHECK(rv_parse_status("Name:\tUid:\t5\nState:\tS\nTgid:\t5\n", &st) == -EINVAL,
	      "key not at line start");
	CHECK(st.tgid == 31, "untouched on failure");
}

static void test_parse_fdinfo(void)
{
	struct rv_fdinfo fi;

	CHECK(rv_parse_fdinfo("pos:\t4096\nflags:\t02100002\nmnt_id:\t25\nino:\t1234\n", &fi) == 0,
	      "file");
	CHECK(fi.pos == 4096 && fi.flags == 02100002 && fi.mnt_id == 25 && fi.ino == 1234 &&
		  fi.scm_fds == -1 && fi.user_files == -1,
	      "file fields");
	CHECK((fi.flags & O_CLOEXEC) &&
		  (fi.flags & ~O_CLOEXEC) == (O_RDWR | 0100000 /* kernel O_LARGEFILE */),
	      "O_CLOEXEC is bit 02000000");

	CHECK(rv_parse_fdinfo("pos:\t0\nflags:\t02000002\nmnt_id:\t8\nino:\t56789\nscm_fds: 3\n",
			      &fi) == 0 &&
		  fi.scm_fds == 3,
	      "socket with scm_fds: %d", fi.scm_fds);

	static const char uring[] = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1043\n"
				    "SqMask:\t0x3\nSqHead:\t0\nSqTail:\t0\nCachedSqHead:\t0\n"
				    "UserFiles:\t3\n"
				    "    0: /tmp/dir with space/file\n"
				    "    1: /tmp/back\\134slash\\040and\\012newline\n"
				    "    2: short\n"
				    "UserBufs:\t0\n"
				    "PollList:\n";
	const char *cursor = NULL;
	char name[256];

	CHECK(rv_parse_fdinfo(uring, &fi) == 0 && fi.user_files == 3, "uring UserFiles %d",
	      fi.user_files);
	CHECK(rv_fdinfo_next_user_file(uring, &cursor, name, sizeof(name)) == 0 &&
		  strcmp(name, "/tmp/dir with space/file") == 0,
	      "name 0 '%s'", name);
	CHECK(rv_fdinfo_next_user_file(uring, &cursor, name, sizeof(name)) == 0 &&
		  strcmp(name, "/tmp/back\\slash and\nnewline") == 0,
	      "name 1 unescaped '%s'", name);
	CHECK(rv_fdinfo_next_user_file(uring, &cursor, name, sizeof(name)) == 0 &&
		  strcmp(name, "short") == 0,
	      "name 2 '%s'", name);
	CHECK(rv_fdinfo_next_user_file(uring, &cursor, name, sizeof(name)) == 1, "end");
	cursor = NULL;
	CHECK(rv_fdinfo_next_user_file(uring, &cursor, name, 8) == -ENAMETOOLONG, "too long");
	cursor = NULL;
	CHECK(rv_fdinfo_next_user_file("pos:\t0\nflags:\t0\n", &cursor, name, sizeof(name)) == 1,
	      "no list");
	cursor = NULL;
	CHECK(rv_fdinfo_next_user_file("UserFiles:\t2\n    0: <none>\n    1: x\n", &cursor, name,
				       sizeof(name)) == 0 &&
		  strcmp(name, "x") == 0,
	      "empty slot skipped (6.1 format)");
	{
		uint32_t slot = 99;

		cursor = NULL;
		CHECK(rv_fdinfo_next_user_slot("UserFiles:\t9\n    0: <none>\n   17: y\n", &cursor,
					       name, sizeof(name), &slot) == 0 &&
			  slot == 17 && strcmp(name, "y") == 0,
		      "slot of 'y': %u", slot);
		slot = 99;
		cursor = NULL;
		CHECK(rv_fdinfo_next_user_slot("UserFiles:\t1\n 4294967296: z\n", &cursor, name,
					       sizeof(name), &slot) == 1 &&
			  slot == 99,
		      "a slot past 32 bits ends the list, slot untouched");
	}

	fi.pos = 17;
	CHECK(rv_parse_fdinfo("flags:\t02\n", &fi) == -EINVAL, "no pos");
	CHECK(rv_parse_fdinfo("pos:\t0\n", &fi) == -EINVAL, "no flags");
	CHECK(rv_parse_fdinfo("pos:\t0\nflags:\t09\n", &fi) == 0 && fi.flags == 0,
	      "octal stops at 9");
	fi.pos = 17;
	CHECK(rv_parse_fdinfo("pos:\t0\nflags:\t77777777777777\n", &fi) == -ERANGE,
	      "flags overflow");
	CHECK(rv_parse_fdinfo("pos:\t99999999999999999999999\nflags:\t0\n", &fi) == -ERANGE,
	      "pos overflow");
	CHECK(rv_parse_fdinfo("pos:\tx\nflags:\t0\n", &fi) == -EINVAL, "bad pos");
	CHECK(fi.pos == 17, "untouched on failure");
}

static void test_parse_maps(void)
{
	struct rv_maps_entry e;

	CHECK(rv_parse_maps_line("7f1c2a000000-7f1c2a021000 r-xp 00002000 fd:01 1311040    "
				 "                /usr/lib/x86_64-linux-gnu/libc.so.6",
				 &e) == 0,
	      "libc");
	CHECK(e.start == 0x7f1c2a000000 && e.end == 0x7f1c2a021000 && e.offset == 0x2000 &&
		  e.prot == (PROT_READ | PROT_EXEC) && e.map_flags == MAP_PRIVATE &&
		  e.dev_major == 0xfd && e.dev_minor == 1 && e.ino == 1311040,
	      "fields");
	CHECK(e.path && strcmp(e.path, "/usr/lib/x86_64-linux-gnu/libc.so.6") == 0, "path");

	CHECK(rv_parse_maps_line("00400000-00401000 rw-s 00000000 103:02 42                  "
				 "   /tmp/a file with  spaces (deleted)",
				 &e) == 0 &&
		  e.map_flags == MAP_SHARED && e.prot == (PROT_READ | PROT_WRITE) &&
		  e.dev_major == 0x103 && e.dev_minor == 2 &&
		  strcmp(e.path, "/tmp/a file with  spaces (deleted)") == 0,
	      "deleted, spaces: '%s'", e.path);
	CHECK(rv_parse_maps_line("7ffd1000-7ffd2000 ---p 00000000 00:00 0 ", &e) == 0 && !e.path &&
		  e.ino == 0 && e.prot == 0,
	      "anonymous, trailing space");
	CHECK(rv_parse_maps_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0", &e) == 0 && !e.path,
	      "anonymous, no trailing space");
	CHECK(rv_parse_maps_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0                   "
				 "       [stack]",
				 &e) == 0 &&
		  strcmp(e.path, "[stack]") == 0,
	      "[stack]");
	CHECK(rv_parse_maps_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  "
				 "                [vsyscall]",
				 &e) == 0 &&
		  e.end == 0xffffffffff601000,
	      "vsyscall");

	e.start = 5;
	CHECK(rv_parse_maps_line("", &e) == -EINVAL, "empty");
	CHECK(rv_parse_maps_line("1000-2000 r-xq 0 00:00 0", &e) == -EINVAL, "bad perms");
	CHECK(rv_parse_maps_line("1000-2000 r-xp 0 0000 0", &e) == -EINVAL, "bad dev");
	CHECK(rv_parse_maps_line("1000-2000 r-xp 0 00:00", &e) == -EINVAL, "no inode");
	CHECK(rv_parse_maps_line("2000-1000 r-xp 0 00:00 0", &e) == -EINVAL, "end < start");
	CHECK(rv_parse_maps_line("1000 r-xp 0 00:00 0", &e) == -EINVAL, "no end");
	CHECK(rv_parse_maps_line("10000000000000000000-1 r-xp 0 00:00 0", &e) == -ERANGE,
	      "overflow");
	CHECK(rv_parse_maps_line("1000-2000 r-xp 0 00:00 12x /a", &e) == -EINVAL,
	      "junk after inode");
	CHECK(e.start == 5, "untouched on failure");
}

/* The parsers on this kernel's real texts. */
static void test_live(void)
{
	char buf[65536];
	struct rv_proc_stat st;
	struct rv_proc_status ss;
	struct rv_fdinfo fi;
	ssize_t n;
	int fd;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CHECK(n > 0, "read stat");
	buf[n] = '\0';
	CHECK(rv_parse_stat(buf, &st) == 0 && st.pid == getpid() && st.state == 'R' &&
		  st.num_threads == 1 && !(st.flags & 0x00200000),
	      "self stat: %s", buf);

	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(rv_parse_status(buf, &ss) == 0 && ss.ruid == getuid() && ss.tgid == getpid(),
	      "self status");

	int probe = open("/proc/self/stat", O_RDONLY | O_CLOEXEC | O_APPEND);
	snprintf(buf, sizeof(buf), "/proc/self/fdinfo/%d", probe);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(rv_parse_fdinfo(buf, &fi) == 0 && (fi.flags & O_CLOEXEC) && (fi.flags & O_APPEND) &&
		  fi.mnt_id > 0,
	      "self fdinfo: %s", buf);

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CHECK(n > 0, "read maps");
	buf[n] = '\0';
	int lines = 0, paths = 0;
	for (char *line = buf, *next; line && *line; line = next) {
		struct rv_maps_entry e;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		CHECK(rv_parse_maps_line(line, &e) == 0, "maps line '%s'", line);
		lines++;
		paths += e.path != NULL;
	}
	CHECK(lines > 3 && paths > 0, "maps: %d lines %d paths", lines, paths);
}

TEST_MAIN("unit-procfs", {"parse_int", test_parse_int, 10}, {"parse_stat", test_parse_stat, 10},
	  {"parse_status", test_parse_status, 10}, {"parse_fdinfo", test_parse_fdinfo, 10},
	  {"parse_maps", test_parse_maps, 10}, {"live", test_live, 10})

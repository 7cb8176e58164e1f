// Writing a file so that readers see the old file or the new one, never a part:
// the bytes go to a temporary in the same directory, are synced, and renamed over
// the target.
//
// A writer killed between creating its temporary and the rename (power loss, OOM
// kill, Ctrl-C during a conversion) leaves `.edgegan-tmp-<pid>-XXXXXX` behind. The
// next write to that directory removes such leftovers, but only those that are
// provably stale: owned by this user, named for a pid that is no longer running
// here, and untouched for kStaleAge. A live writer is never touched: its pid runs,
// and it keeps the file's mtime fresh while it writes (the age also covers writers
// in another pid namespace or on another host sharing the directory, whose pids
// mean nothing here).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "edgegan/io.h"

namespace edgegan {
namespace {

constexpr char kPrefix[] = ".edgegan-tmp-";
constexpr std::chrono::seconds kStaleAge{10 * 60};

// The pid in `.edgegan-tmp-<pid>-XXXXXX`, or 0 when the name is not ours.
pid_t temporary_owner(const char* name) {
  if (std::strncmp(name, kPrefix, sizeof kPrefix - 1) != 0) return 0;
  const char* p = name + sizeof kPrefix - 1;
  long pid = 0;
  const char* digits = p;
  while (*p >= '0' && *p <= '9' && pid < (1L << 30)) pid = pid * 10 + (*p++ - '0');
  if (p == digits || *p != '-' || std::strlen(p + 1) != 6) return 0;
  return static_cast<pid_t>(pid);
}

bool process_is_running(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

void remove_stale_temporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;  // the mkstemp that follows reports an unusable directory
  const int dir_fd = ::dirfd(d);
  const auto now = std::chrono::system_clock::now();
  while (const dirent* e = ::readdir(d)) {
    const pid_t pid = temporary_owner(e->d_name);
    if (pid <= 0 || pid == ::getpid() || process_is_running(pid)) continue;
    struct stat st {};
    if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    const auto modified = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec));
    if (now - modified < kStaleAge) continue;
    ::unlinkat(dir_fd, e->d_name, 0);  // best effort: another writer may have removed it first
  }
  ::closedir(d);
}

}  // namespace

void write_file_atomically(const std::string& path, const void* bytes, size_t size) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  remove_stale_temporaries(dir);
  std::string tmp = (dir == "/" ? "" : dir) + "/" + kPrefix + std::to_string(::getpid()) + "-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw Error("cannot write to directory '" + dir + "': " + std::strerror(errno));
  const auto* p = static_cast<const uint8_t*>(bytes);
  size_t left = size;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("cannot write '" + path + "': " + std::strerror(err));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + std::strerror(err));
  }
  ::chmod(tmp.c_str(), 0644);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + std::strerror(err));
  }
}

}  // namespace edgegan

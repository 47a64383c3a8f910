// Thread-safety annotations: Clang's capability attributes, under short names, so that the
// compiler proves which lock guards which member and which function needs which lock held.
//
// The dev preset builds with clang and -Wthread-safety -Werror=thread-safety (and the beta
// check, which verifies ACQUIRED_BEFORE/ACQUIRED_AFTER lock orders): an access to a GUARDED_BY
// member without its mutex, a call to a REQUIRES function without the lock, or a lock taken out
// of its declared order fails the build. On other compilers (the release preset is gcc) every
// macro expands to nothing, so the annotations cost nothing there.
//
// They only work on an annotated lock type: libstdc++'s std::mutex carries none, so guarded
// state uses telos::Mutex and telos::MutexLock (telos/base/mutex.h).
//
// The vocabulary (Clang's "Thread Safety Analysis" documentation has the full rules):
//   GUARDED_BY(mu)           the member is read and written only with `mu` held
//   PT_GUARDED_BY(mu)        what the pointer member points at is guarded by `mu`
//   REQUIRES(mu)             the caller holds `mu` (replaces "REQUIRES: mu held" comments)
//   EXCLUDES(mu)             the caller must not hold `mu` (the function takes it itself)
//   ACQUIRED_AFTER(mu...)    this mutex is only ever taken while holding `mu`, never before it
//   ACQUIRED_BEFORE(mu...)   the converse
//   ACQUIRE/RELEASE/TRY_ACQUIRE, SCOPED_CAPABILITY, CAPABILITY, ASSERT_CAPABILITY: for lock
//                            types and the functions that take or check them
//   NO_THREAD_SAFETY_ANALYSIS  opts a function out; say why beside it
#pragma once

#if defined(__clang__)
#define TELOS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TELOS_THREAD_ANNOTATION(x)
#endif

// Abseil (pulled in by gRPC) still defines some of these names for backward compatibility, to
// the same attributes; whichever header comes first defines them.
#ifndef CAPABILITY
#define CAPABILITY(x) TELOS_THREAD_ANNOTATION(capability(x))
#endif
#ifndef SCOPED_CAPABILITY
#define SCOPED_CAPABILITY TELOS_THREAD_ANNOTATION(scoped_lockable)
#endif
#ifndef GUARDED_BY
#define GUARDED_BY(x) TELOS_THREAD_ANNOTATION(guarded_by(x))
#endif
#ifndef PT_GUARDED_BY
#define PT_GUARDED_BY(x) TELOS_THREAD_ANNOTATION(pt_guarded_by(x))
#endif
#ifndef ACQUIRED_BEFORE
#define ACQUIRED_BEFORE(...) TELOS_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#endif
#ifndef ACQUIRED_AFTER
#define ACQUIRED_AFTER(...) TELOS_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#endif
#ifndef REQUIRES
#define REQUIRES(...) TELOS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#endif
#ifndef REQUIRES_SHARED
#define REQUIRES_SHARED(...) TELOS_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#endif
#ifndef ACQUIRE
#define ACQUIRE(...) TELOS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#endif
#ifndef RELEASE
#define RELEASE(...) TELOS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#endif
#ifndef TRY_ACQUIRE
#define TRY_ACQUIRE(...) TELOS_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#endif
#ifndef EXCLUDES
#define EXCLUDES(...) TELOS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#endif
#ifndef ASSERT_CAPABILITY
#define ASSERT_CAPABILITY(x) TELOS_THREAD_ANNOTATION(assert_capability(x))
#endif
#ifndef RETURN_CAPABILITY
#define RETURN_CAPABILITY(x) TELOS_THREAD_ANNOTATION(lock_returned(x))
#endif
#ifndef NO_THREAD_SAFETY_ANALYSIS
#define NO_THREAD_SAFETY_ANALYSIS TELOS_THREAD_ANNOTATION(no_thread_safety_analysis)
#endif

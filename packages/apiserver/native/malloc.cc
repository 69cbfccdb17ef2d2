// plinth-malloc: returns the C heap's free pages to the operating system.
//
// Node's Buffers live outside V8's heap, in glibc's malloc arenas. A burst of them (the watch
// caches' initial etcd read: 16-64 KiB socket reads and multi-MiB gRPC messages) is freed once the
// JavaScript objects are collected, but glibc gives memory back only from the top of an arena,
// and a few small long-lived allocations made meanwhile pin it: the freed pages stay in the
// process's RSS (80 MiB after loading 200,000 objects). malloc_trim(0) releases every free page,
// wherever it is. Built by the Makefile when Node's headers and g++ are present; without it plinth
// runs as before.
//
// reduceHeap() does the same for V8's heap, once, after start-up (src/malloc.ts, settleHeapSoon):
// V8's LowMemoryNotification, which N-API does not offer, through V8's own API (the addon is
// built against the headers of the Node that runs it).
#include <node_api.h>
#include <v8.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

// Bytes free inside the arenas (glibc's mallinfo2().fordblks); -1 where unknown.
napi_value FreeBytes(napi_env env, napi_callback_info) {
  double free_bytes = -1;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 mi = mallinfo2();
  free_bytes = static_cast<double>(mi.fordblks);
#endif
  napi_value out;
  napi_create_double(env, free_bytes, &out);
  return out;
}

// malloc_trim(0): whether any memory was released.
napi_value Trim(napi_env env, napi_callback_info) {
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) != 0;
#endif
  napi_value out;
  napi_get_boolean(env, released, &out);
  return out;
}

// V8's LowMemoryNotification: full collections until nothing more is freed, with compaction, and
// the freed heap pages returned to the operating system.
napi_value ReduceHeap(napi_env env, napi_callback_info) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  if (isolate != nullptr) isolate->LowMemoryNotification();
  napi_value out;
  napi_get_undefined(env, &out);
  return out;
}

}  // namespace

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"freeBytes", nullptr, FreeBytes, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"trim", nullptr, Trim, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"reduceHeap", nullptr, ReduceHeap, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

;; A WASI 0.3 HTTP handler written by hand in WAT (a core module; its
;; component is made by wit-component from hello-p3.wit): the component
;; model's async ABI, with no bindings generator.
;;
;; - POST: an echo. The request's body and trailers, as consume-body gives
;;   them, are handed straight back as the response's, under the request's
;;   content-type: rt streams the body from the client through the guest and
;;   back, trailers included.
;; - Any other method: "Hello from WASI 0.3!\n" (text/plain), written to a
;;   stream the guest makes after `handle` returned, then trailers ok(none).
;;
;; Requests are served side by side in one instance: each task keeps its
;; state in a record of its own (a free list from 1024 on) that its context
;; points to, and waits on a waitable set of its own.
(module
  (import "wasi:http/types@0.3.0" "[constructor]fields" (func $fields-new (result i32)))
  (import "wasi:http/types@0.3.0" "[method]fields.get" (func $fields-get (param i32 i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[method]fields.append" (func $fields-append (param i32 i32 i32 i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[resource-drop]fields" (func $fields-drop (param i32)))
  (import "wasi:http/types@0.3.0" "[method]request.get-headers" (func $get-headers (param i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[method]request.get-method" (func $get-method (param i32 i32)))
  (import "wasi:http/types@0.3.0" "[static]request.consume-body" (func $consume-body (param i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[future-new-0][static]request.consume-body" (func $res-new (result i64)))
  (import "wasi:http/types@0.3.0" "[async-lower][future-write-0][static]request.consume-body" (func $res-write (param i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[future-drop-writable-0][static]request.consume-body" (func $res-drop (param i32)))
  (import "wasi:http/types@0.3.0" "[static]response.new" (func $response-new (param i32 i32 i32 i32 i32)))
  (import "wasi:http/types@0.3.0" "[stream-new-0][static]response.new" (func $stream-new (result i64)))
  (import "wasi:http/types@0.3.0" "[future-new-1][static]response.new" (func $future-new (result i64)))
  (import "wasi:http/types@0.3.0" "[async-lower][stream-write-0][static]response.new" (func $stream-write (param i32 i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[stream-drop-writable-0][static]response.new" (func $stream-drop (param i32)))
  (import "wasi:http/types@0.3.0" "[async-lower][future-write-1][static]response.new" (func $future-write (param i32 i32) (result i32)))
  (import "wasi:http/types@0.3.0" "[future-drop-writable-1][static]response.new" (func $future-drop-w (param i32)))
  (import "wasi:http/types@0.3.0" "[future-drop-readable-2][static]response.new" (func $future-drop-r (param i32)))
  (import "wasi:http/types@0.3.0" "[resource-drop]request" (func $request-drop (param i32)))
  (import "$root" "[waitable-set-new]" (func $set-new (result i32)))
  (import "$root" "[waitable-set-drop]" (func $set-drop (param i32)))
  (import "$root" "[waitable-join]" (func $join (param i32 i32)))
  (import "$root" "[context-get-0]" (func $ctx-get (result i32)))
  (import "$root" "[context-set-0]" (func $ctx-set (param i32)))
  (import "[export]wasi:http/handler@0.3.0" "[task-return]handle" (func $return (param i32 i32 i32 i64 i32 i32 i32 i32)))
  (memory (export "memory") 1)
  ;; The 16 bytes at 0 are never written: zeros, the value ok (and ok(none)) the futures are written with.
  (data (i32.const 64) "Hello from WASI 0.3!\n")
  (data (i32.const 96) "content-type")
  (data (i32.const 112) "text/plain; charset=utf-8")
  ;; A task's record, 16 bytes: +0 its waitable set, +4 the body's writable end, +8 the trailers', +12 consume-body's res.
  (global $next (mut i32) (i32.const 1024))
  (global $free (mut i32) (i32.const 0))
  ;; What the glue allocates for a method's name other than the standard ones: a bump region that starts over.
  (global $heap (mut i32) (i32.const 49152))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (local $p i32)
    (if (i32.gt_u (i32.add (global.get $heap) (local.get 3)) (i32.const 65536)) (then (global.set $heap (i32.const 49152))))
    (local.set $p (global.get $heap))
    (global.set $heap (i32.and (i32.add (i32.add (local.get $p) (local.get 3)) (i32.const 7)) (i32.const -8)))
    (local.get $p))
  (func $task (result i32) (local $t i32)
    (if (global.get $free)
      (then (local.set $t (global.get $free)) (global.set $free (i32.load (local.get $t))))
      (else (local.set $t (global.get $next)) (global.set $next (i32.add (local.get $t) (i32.const 16)))))
    (memory.fill (local.get $t) (i32.const 0) (i32.const 16))
    (call $ctx-set (local.get $t))
    (local.get $t))
  ;; Waits on `w` in the task's set (made when first needed): the callback hears when it is done.
  (func $wait (param $w i32) (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.eqz (i32.load (local.get $t))) (then (i32.store (local.get $t) (call $set-new))))
    (call $join (local.get $w) (i32.load (local.get $t)))
    (i32.or (i32.shl (i32.load (local.get $t)) (i32.const 4)) (i32.const 2)))
  ;; The task is done: its set and record go.
  (func $exit (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (if (i32.load (local.get $t)) (then (call $set-drop (i32.load (local.get $t)))))
    (i32.store (local.get $t) (global.get $free))
    (global.set $free (local.get $t))
    (i32.const 0))
  ;; response.new(headers, some(contents), trailers), its transmission future dropped; task.return ok(response).
  (func $respond (param $headers i32) (param $contents i32) (param $trailers i32)
    (call $response-new (local.get $headers) (i32.const 1) (local.get $contents) (local.get $trailers) (i32.const 16))
    (call $future-drop-r (i32.load (i32.const 20)))
    (call $return (i32.const 0) (i32.load (i32.const 16)) (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0)))
  ;; Fields with a content-type of `len` bytes at `value` (append's result at 224 is not looked at: the value is valid).
  (func $typed (param $value i32) (param $len i32) (result i32) (local $fields i32)
    (local.set $fields (call $fields-new))
    (call $fields-append (local.get $fields) (i32.const 96) (i32.const 12) (local.get $value) (local.get $len) (i32.const 224))
    (local.get $fields))
  (func $hello (param $req i32) (result i32) (local $s i64) (local $f i64) (local $t i32)
    (local.set $t (call $ctx-get))
    (call $request-drop (local.get $req))
    (local.set $s (call $stream-new))
    (local.set $f (call $future-new))
    (i32.store offset=4 (local.get $t) (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))
    (i32.store offset=8 (local.get $t) (i32.wrap_i64 (i64.shr_u (local.get $f) (i64.const 32))))
    (call $respond (call $typed (i32.const 112) (i32.const 25)) (i32.wrap_i64 (local.get $s)) (i32.wrap_i64 (local.get $f)))
    ;; -1: BLOCKED until rt reads it.
    (if (i32.eq (call $stream-write (i32.load offset=4 (local.get $t)) (i32.const 64) (i32.const 21)) (i32.const -1))
      (then (return (call $wait (i32.load offset=4 (local.get $t))))))
    (call $trailers))
  ;; The body is written: it ends, and the trailers future is written ok(none): the 16 bytes at 0, zeros, never written.
  (func $trailers (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (call $stream-drop (i32.load offset=4 (local.get $t)))
    (i32.store offset=4 (local.get $t) (i32.const 0))
    (if (i32.eq (call $future-write (i32.load offset=8 (local.get $t)) (i32.const 0)) (i32.const -1))
      (then (return (call $wait (i32.load offset=8 (local.get $t))))))
    (call $future-drop-w (i32.load offset=8 (local.get $t)))
    (call $exit))
  (func $echo (param $req i32) (result i32) (local $res i64) (local $t i32) (local $h i32) (local $headers i32)
    (local.set $t (call $ctx-get))
    ;; The request's first content-type (fields.get: a list of values at 200, each a list<u8>), if it has one.
    (local.set $h (call $get-headers (local.get $req)))
    (call $fields-get (local.get $h) (i32.const 96) (i32.const 12) (i32.const 200))
    (local.set $headers (if (result i32) (i32.load offset=4 (i32.const 200))
      (then (call $typed (i32.load (i32.load (i32.const 200))) (i32.load offset=4 (i32.load (i32.const 200)))))
      (else (call $fields-new))))
    (call $fields-drop (local.get $h))
    (local.set $res (call $res-new))
    (call $consume-body (local.get $req) (i32.wrap_i64 (local.get $res)) (i32.const 40))
    (call $respond (local.get $headers) (i32.load (i32.const 40)) (i32.load (i32.const 44)))
    ;; consume-body's res: ok, the body went where the guest meant it to.
    (i32.store offset=12 (local.get $t) (i32.wrap_i64 (i64.shr_u (local.get $res) (i64.const 32))))
    (if (i32.eq (call $res-write (i32.load offset=12 (local.get $t)) (i32.const 0)) (i32.const -1))
      (then (return (call $wait (i32.load offset=12 (local.get $t))))))
    (call $res-drop (i32.load offset=12 (local.get $t)))
    (call $exit))
  (func (export "[async-lift]wasi:http/handler@0.3.0#handle") (param $req i32) (result i32)
    (drop (call $task))
    (call $get-method (local.get $req) (i32.const 48))
    ;; The method variant's case: 2 is post.
    (if (result i32) (i32.eq (i32.load8_u (i32.const 48)) (i32.const 2))
      (then (call $echo (local.get $req)))
      (else (call $hello (local.get $req)))))
  ;; A write the task waited on is done.
  (func (export "[callback][async-lift]wasi:http/handler@0.3.0#handle") (param $event i32) (param $w i32) (param $p i32) (result i32) (local $t i32)
    (local.set $t (call $ctx-get))
    (call $join (local.get $w) (i32.const 0))
    (if (i32.eq (local.get $w) (i32.load offset=4 (local.get $t))) (then (return (call $trailers))))
    (if (i32.eq (local.get $w) (i32.load offset=8 (local.get $t))) (then (call $future-drop-w (local.get $w))))
    (if (i32.eq (local.get $w) (i32.load offset=12 (local.get $t))) (then (call $res-drop (local.get $w))))
    (call $exit)))

// `repositories.watch` (docs/api.md §5.4): notices that a repository changed
// and says so, once per burst; what a change means (a reload, or restarts)
// is the control plane's to decide (ControlPlane.watched).
//
// A `file:` repository is watched two ways at once. File events (fs.watch,
// recursive for a directory) are the fast path: each one restarts the settle
// timer, and `settle_ms` after the last one the change is reported, so a
// burst of writes is one change and a file still being written is not read
// while its writes keep coming. A comparison of the listing (names, sizes,
// modification times) every `poll_seconds` is the backstop: where fs.watch
// fails (no inotify watches left, a root that does not exist yet) it is the
// only path, and on a network volume, whose remote writes raise no local
// events, it is the one that notices. A root whose file events cannot be had
// is tried again at every poll.
//
// An `https:` repository raises no events: every `poll_seconds` it is asked
// whether it changed since its last complete scan (httpsRepositoryChanged:
// one conditional request, and one per component listed without a sha256).
//
// Nothing here keeps the process alive: the timers are unref'd and the file
// watchers not persistent; `stop()` ends them all on shutdown.

import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import type { Logger } from '../log.js';
import { httpsRepositoryChanged, type HttpsOptions } from './https-repository.js';
import { fileUrlPath } from './repositories.js';
import { scanError } from './repository-scan.js';

/** A repository that changed, once its changes have settled. */
export interface RepositoryChange {
  /** As written in `repo_urls`. */
  repository: string;
  /**
   * The files whose events made up the change (absolute paths). Empty when
   * a poll saw it, which does not tell which files: then anything may have
   * changed.
   */
  paths: string[];
}

export interface WatchOptions {
  repoUrls: readonly string[];
  /** What relative `file:` URLs are relative to. */
  cwd: string;
  settleMs: number;
  pollMs: number;
  download: HttpsOptions;
  log: Logger;
  /** Called once per settled change; what it starts runs on its own (it is not awaited). */
  changed(change: RepositoryChange): void;
}

/** One repository's watch. */
interface Watching {
  /** Starts watching; anything that changed since the watch was made is reported. */
  start(): void;
  stop(): void;
}

export class RepositoryWatch {
  readonly #watches: Watching[];

  /**
   * Made before the first scan and started after it: each `file:`
   * repository's listing is taken now, so that a change made while the
   * first scan ran is reported once the watch starts.
   */
  static async prepare(opts: WatchOptions): Promise<RepositoryWatch> {
    const watches = await Promise.all(
      opts.repoUrls.map(async (url): Promise<Watching> => {
        if (url.startsWith('https:')) return new HttpsPoll(url, opts);
        const files = new FileWatch(url, fileUrlPath(url, opts.cwd), opts);
        await files.takeBaseline();
        return files;
      }),
    );
    return new RepositoryWatch(watches);
  }

  private constructor(watches: Watching[]) {
    this.#watches = watches;
  }

  start(): void {
    for (const w of this.#watches) w.start();
  }

  stop(): void {
    for (const w of this.#watches) w.stop();
  }
}

/** The listing of a root that is not there. */
const MISSING = 'missing';

class FileWatch implements Watching {
  readonly #url: string;
  readonly #opts: WatchOptions;
  /** The folder fs.watch and the poll look at. */
  readonly #dir: string;
  /** A `file:` URL naming one .wasm: only its own files count (`<stem>.wasm`, `<stem>.toml`, `<stem>.config.*`), not its folder's others. */
  readonly #stem: string | undefined;
  #watcher: FSWatcher | undefined;
  /** Why file events cannot be had, once said: the poll tries again quietly. */
  #unwatchable: string | undefined;
  #settle: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;
  #polling = false;
  /** The listing when the last change was reported: what a poll compares with. */
  #baseline = MISSING;
  readonly #paths = new Set<string>();
  #stopped = false;

  constructor(url: string, root: string, opts: WatchOptions) {
    this.#url = url;
    this.#opts = opts;
    // The scan's own rule: a root ending in .wasm is one component (repositories.ts).
    const single = root.endsWith('.wasm');
    this.#dir = single ? dirname(root) : root;
    this.#stem = single ? `${basename(root, '.wasm')}.` : undefined;
  }

  async takeBaseline(): Promise<void> {
    this.#baseline = await this.#listing();
  }

  start(): void {
    this.#listen();
    this.#poll = setInterval(() => void this.#compare(), this.#opts.pollMs).unref();
    void this.#compare();
  }

  stop(): void {
    this.#stopped = true;
    this.#unlisten();
    clearInterval(this.#poll);
    clearTimeout(this.#settle);
  }

  #listen(): void {
    if (this.#watcher !== undefined || this.#stopped) return;
    try {
      const watcher = watch(this.#dir, { recursive: this.#stem === undefined, persistent: false }, (_event, name) => this.#event(name));
      watcher.on('error', (e) => {
        this.#unlisten();
        this.#cannotListen(e);
      });
      this.#watcher = watcher;
      if (this.#unwatchable !== undefined) this.#opts.log.info({ repository: this.#url }, `watching ${this.#dir} for file events again`);
      this.#unwatchable = undefined;
    } catch (e) {
      this.#cannotListen(e);
    }
  }

  #unlisten(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #cannotListen(e: unknown): void {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    if (this.#unwatchable === why) return;
    this.#unwatchable = why;
    this.#opts.log.warn({ repository: this.#url, dir: this.#dir }, `no file events for ${this.#dir} (${why}): its listing is compared every ${this.#opts.pollMs / 1000} s instead`);
  }

  #event(name: string | Buffer | null): void {
    const file = name === null ? undefined : String(name);
    if (this.#stem !== undefined && file !== undefined && !basename(file).startsWith(this.#stem)) return;
    this.#touch(file === undefined ? undefined : join(this.#dir, file));
  }

  /** A change seen (`path`: by a file event): reported once none has come for `settle_ms`. */
  #touch(path?: string): void {
    if (this.#stopped) return;
    if (path !== undefined) this.#paths.add(path);
    clearTimeout(this.#settle);
    this.#settle = setTimeout(() => void this.#settled(), this.#opts.settleMs).unref();
  }

  async #settled(): Promise<void> {
    const paths = [...this.#paths];
    this.#paths.clear();
    // What the reload will see: a poll reports only what changes after it.
    this.#baseline = await this.#listing();
    if (!this.#stopped) this.#opts.changed({ repository: this.#url, paths });
  }

  /** The backstop: a listing unlike the last one reported is a change (of unknown files). */
  async #compare(): Promise<void> {
    if (this.#polling || this.#stopped) return;
    this.#polling = true;
    try {
      const listing = await this.#listing();
      // A root removed takes its file events with it; one that (re)appears gets them back.
      if (listing === MISSING) this.#unlisten();
      else this.#listen();
      if (listing !== this.#baseline) {
        this.#baseline = listing;
        this.#touch();
      }
    } finally {
      this.#polling = false;
    }
  }

  /** Names, sizes and modification times of the repository's files, one line each; MISSING when its folder is not there. */
  async #listing(): Promise<string> {
    let entries;
    try {
      entries = await readdir(this.#dir, { withFileTypes: true, recursive: this.#stem === undefined });
    } catch {
      return MISSING;
    }
    const lines = await Promise.all(
      entries
        .filter((e) => !e.isDirectory() && (this.#stem === undefined || e.name.startsWith(this.#stem)))
        .map(async (e) => {
          const path = join(e.parentPath, e.name);
          // A file removed meanwhile is left out, as the next listing will.
          const info = await stat(path).catch(() => undefined);
          return info === undefined ? '' : `${relative(this.#dir, path)}\t${info.size}\t${info.mtimeMs}`;
        }),
    );
    return lines.filter((l) => l !== '').sort().join('\n');
  }
}

class HttpsPoll implements Watching {
  readonly #url: string;
  readonly #opts: WatchOptions;
  #poll: NodeJS.Timeout | undefined;
  #polling = false;
  /** The last poll's failure, said once until a poll succeeds. */
  #failing: string | undefined;

  constructor(url: string, opts: WatchOptions) {
    this.#url = url;
    this.#opts = opts;
  }

  start(): void {
    this.#poll = setInterval(() => void this.#ask(), this.#opts.pollMs).unref();
  }

  stop(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
  }

  async #ask(): Promise<void> {
    // A poll still waiting for its answer (a slow repository) is not asked again beside it.
    if (this.#polling) return;
    this.#polling = true;
    const { log, download } = this.#opts;
    try {
      const changed = await httpsRepositoryChanged(this.#url, download);
      if (this.#failing !== undefined) log.info({ repository: this.#url }, 'the repository answers again');
      this.#failing = undefined;
      if (changed && this.#poll !== undefined) this.#opts.changed({ repository: this.#url, paths: [] });
    } catch (e) {
      const error = scanError(this.#url, e);
      if (error !== this.#failing) log.warn({ repository: this.#url }, `cannot ask whether the repository changed: ${error}`);
      this.#failing = error;
    } finally {
      this.#polling = false;
    }
  }
}

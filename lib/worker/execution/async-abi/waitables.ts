// What a guest task of the async ABI waits on (CanonicalABI.md, "Waitable
// State"): waitables (subtasks, the ends of streams and futures) joined to
// waitable sets, and the events they hold until a task takes them. A set
// with an event tells whoever waits on it (the instance's task driver,
// async-instance.ts).

/** The event codes a callback is called with. */
export const EVENT = { NONE: 0, SUBTASK: 1, STREAM_READ: 2, STREAM_WRITE: 3, FUTURE_READ: 4, FUTURE_WRITE: 5, TASK_CANCELLED: 6 } as const;

/** A subtask's states, as its events and its start code give them. */
export const SUBTASK = { STARTING: 0, STARTED: 1, RETURNED: 2, STARTED_CANCELLED: 3, RETURNED_CANCELLED: 4 } as const;

/** An event as a callback gets it: its code, the waitable's handle, its payload. */
export type Event = readonly [code: number, handle: number, payload: number];

export abstract class Waitable {
  /** Its index in the instance's table while it is there. */
  handle = 0;
  set: WaitableSet | undefined;
  #event: [code: number, payload: number] | undefined;

  setEvent(code: number, payload: number): void {
    this.#event = [code, payload];
    this.set?.ready();
  }

  hasEvent(): boolean {
    return this.#event !== undefined;
  }

  takeEvent(): Event | undefined {
    const event = this.#event;
    if (!event) return undefined;
    this.#event = undefined;
    return [event[0], this.handle, event[1]];
  }

  join(set: WaitableSet | undefined): void {
    this.set?.members.delete(this);
    this.set = set;
    if (!set) return;
    set.members.add(this);
    if (this.#event) set.ready();
  }
}

export class WaitableSet {
  readonly members = new Set<Waitable>();
  /** Who to tell when a member has an event (the task waiting on the set, through the driver). */
  onReady: (() => void) | undefined;

  ready(): void {
    this.onReady?.();
  }

  hasEvent(): boolean {
    for (const member of this.members) if (member.hasEvent()) return true;
    return false;
  }

  takeEvent(): Event | undefined {
    for (const member of this.members) {
      const event = member.takeEvent();
      if (event) return event;
    }
    return undefined;
  }
}

/** A call of an async-lowered host import in flight: done once its result is in the guest's memory. */
export class Subtask extends Waitable {
  state: number = SUBTASK.STARTED;

  resolved(): boolean {
    return this.state !== SUBTASK.STARTED;
  }

  /** Its result is delivered (or it was cancelled): the guest learns it from the event. */
  settle(state: number): void {
    if (this.resolved()) return;
    this.state = state;
    this.setEvent(EVENT.SUBTASK, state);
  }
}

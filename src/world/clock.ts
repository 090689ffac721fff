/** The world's time and chance, shared by the core and every system. */
export class WorldClock {
  /** Ticks since the world started (`World.step` advances it). */
  tick = 0;
  constructor(
    /** Wall-clock milliseconds (injected in tests). */
    readonly now: () => number,
    /** Uniform draws in [0, 1) (scripted in tests). */
    readonly rng: () => number,
  ) {}
}

/**
 * Worker JVMs for the multi-process suites: {@link io.latchkey.testkit.process.WorkerJvm} starts
 * and kills them, {@link io.latchkey.testkit.process.LockWorker} is what they run.
 */
@NullMarked
package io.latchkey.testkit.process;

import org.jspecify.annotations.NullMarked;

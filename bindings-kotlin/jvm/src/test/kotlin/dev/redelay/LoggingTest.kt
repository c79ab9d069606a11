package dev.redelay

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.io.File

class LoggingTest {
    // pom.xml runs the tests with slf4j-simple writing to this file, `redelay` at debug.
    private val logFile = File(System.getProperty("org.slf4j.simpleLogger.logFile") ?: error("run under Maven"))

    @Test
    fun `the core's log records reach SLF4J`() = runBlocking<Unit> {
        testClient("log").use { client ->
            val q = client.queue(uniqueName("log"))
            q.subscribe { }.close()
            // The core logs "subscription closed" (debug) once the drain is over.
            val line = Regex("""DEBUG redelay - redelay[\w:]*: subscription closed.*queue="${q.name}"""")
            eventually(what = "the core's close record in ${logFile.path}") {
                logFile.exists() && logFile.readLines().any { line.containsMatchIn(it) }
            }
        }
    }
}

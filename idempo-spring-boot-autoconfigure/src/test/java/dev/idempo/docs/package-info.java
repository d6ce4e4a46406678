/**
 * Java snippets of the documentation that need this module's test servers, compiled and
 * run here; see the sample app's {@code dev.idempo.docs.DocumentationSnippetsTests}. No
 * test application scans this package.
 */
@NullMarked
package dev.idempo.docs;

import org.jspecify.annotations.NullMarked;

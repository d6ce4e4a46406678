/**
 * The documentation held to the code: its Java snippets, compiled and run here, and the
 * property names it gives, checked against idempo's configuration metadata. Each snippet
 * is a region between {@code // tag::name[]} and {@code // end::name[]}, and the Markdown
 * names it in a {@code <!-- snippet: path#name -->} line above its block;
 * {@link dev.idempo.docs.DocumentationSnippetsTests} fails when a block and its region
 * differ. This package lies outside the sample's {@code dev.idempo.sample}, so the
 * sample's component scan never picks these controllers up.
 */
@NullMarked
package dev.idempo.docs;

import org.jspecify.annotations.NullMarked;

// Renders and lints a chart with Helm's own engine (helm-java: Helm's Go code as a native library), for
// test/infra/helm-java.ts. Run as a single-file source program on the helm-java classpath:
//
//   java -cp '<libDir>/*' HelmRender.java <lintChart> <renderChart> <releaseName> <namespace> \
//     <kubeVersion> <values> [<kubeVersion> <values>]...
//
// <values> is a values file, or "-" for the chart's defaults alone; each is rendered from <renderChart>
// separately (helm template --kube-version <kubeVersion> --values <file>), after one `helm lint --strict`
// of <lintChart> (two arguments, so that the caller may render a copy but lints the chart itself). One
// JSON object per line on stdout, in argument order:
//   {"lint":{"failed":false,"messages":["..."]}}
//   {"values":"<file or ->","manifest":"---\n..."}    or    {"values":"...","error":"<Helm's error>"}
// (a values line per pair, in order).
// A failed render is reported, not thrown, so that the caller sees every values file's outcome at once.
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

public class HelmRender {
  public static void main(String[] args) {
    if (args.length < 6 || args.length % 2 != 0) {
      System.err.println(
          "usage: HelmRender <lintChart> <renderChart> <releaseName> <namespace> (<kubeVersion> <values|->)...");
      System.exit(2);
    }
    String releaseName = args[2];
    String namespace = args[3];
    Helm helm = new Helm(Path.of(args[1]));

    LintResult lint = new Helm(Path.of(args[0])).lint().strict().call();
    System.out.println("{\"lint\":{\"failed\":" + lint.isFailed() + ",\"messages\":" + jsonList(lint.getMessages()) + "}}");

    for (int i = 4; i < args.length; i += 2) {
      String kubeVersion = args[i];
      String values = args[i + 1];
      TemplateCommand template =
          helm.template().withName(releaseName).withNamespace(namespace).withKubeVersion(kubeVersion);
      if (!values.equals("-")) template = template.withValuesFile(Path.of(values));
      String line;
      try {
        line = "\"manifest\":" + json(template.call());
      } catch (IllegalStateException error) {
        // helm-java throws IllegalStateException with Helm's own error text for a failed render.
        line = "\"error\":" + json(String.valueOf(error.getMessage()));
      }
      System.out.println("{\"values\":" + json(values) + "," + line + "}");
    }
  }

  private static String jsonList(List<String> items) {
    return items.stream().map(HelmRender::json).collect(Collectors.joining(",", "[", "]"));
  }

  private static String json(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
        }
      }
    }
    return out.append('"').toString();
  }
}

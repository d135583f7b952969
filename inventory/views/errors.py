from django.shortcuts import render


def server_error(request):
    """A 500 shows the request id to quote, never a traceback."""
    return render(request, "500.html", {"request_id": getattr(request, "request_id", "")}, status=500)

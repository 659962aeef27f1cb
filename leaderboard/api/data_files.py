"""The data files' API: participants list a competition's files and download them (signed in); its host attaches
and removes them. Every file is one the host chose to publish; the hidden test set is never served here."""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api.pagination import PAGE_PARAMETERS, page_headers, page_window
from leaderboard.competitions.data_files import data_file_response
from leaderboard.competitions.models import Competition, DataFile
from leaderboard.competitions.selectors import competition_get, competition_is_host, data_file_get, list_data_files
from leaderboard.competitions.services import add_data_file, remove_data_file
from leaderboard.errors import DataFileTooLarge

#: What a multipart body may hold beside its file (boundaries, part headers, the name and description fields).
_MULTIPART_SLACK = 64 * 1024


class DataFileSerializer(serializers.Serializer):
    name = serializers.CharField()
    size = serializers.IntegerField(help_text="Bytes.")
    sha256 = serializers.CharField(help_text="SHA-256 of the file's bytes, in hex.")
    description = serializers.CharField()
    created_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField(help_text="The download (signed-in participants: a token or a session).")

    def get_url(self, data_file: DataFile) -> str:
        path = reverse("api:data-file", args=[self.context["slug"], data_file.name])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class DataFileUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="The file (any type; CSV, Parquet and zip are the usual ones).")
    name = serializers.CharField(required=False, allow_blank=True, default="",
                                 help_text="The name participants see (default: the uploaded file's name).")
    description = serializers.CharField(required=False, allow_blank=True, default="")
    replace = serializers.BooleanField(required=False, default=False,
                                       help_text="Replace a file of the same name (else that is refused).")


def _competition(slug: str) -> Competition:
    try:
        return competition_get(slug=slug)
    except Competition.DoesNotExist:
        raise NotFound("no such competition") from None


def _listing(request: Request, competition: Competition) -> Response:
    files = list_data_files(competition)
    window = page_window(request, len(files))
    context = {"slug": competition.slug, "request": request}
    return page_headers(Response(DataFileSerializer(files[window], many=True, context=context).data), request,
                        len(files))


class DataFileListApi(APIView):
    """The competition's data files (public metadata, like the competition's page); downloading takes a sign-in."""

    @extend_schema(responses=DataFileSerializer(many=True), parameters=PAGE_PARAMETERS)
    def get(self, request: Request, slug: str) -> Response:
        return _listing(request, _competition(slug))


class DataFileDownloadApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Download a data file",
        description="The file's bytes as an attachment (`Content-Disposition`), its SHA-256 as the `ETag`.",
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY,
                   401: OpenApiResponse(description="not signed in"),
                   404: OpenApiResponse(description="no such competition or file")},
    )
    def get(self, request: Request, slug: str, name: str) -> FileResponse:
        competition = _competition(slug)
        try:
            return data_file_response(data_file_get(competition=competition, name=name))
        except DataFile.DoesNotExist:
            raise NotFound("no such data file") from None


def _host_competition(request: Request, slug: str) -> Competition:
    competition = _competition(slug)
    if not competition_is_host(user=request.user, competition=competition):
        raise PermissionDenied("only the competition's host (or staff) may do this")
    return competition


class HostDataFilesApi(APIView):
    """The host's side: list (as participants see it) and attach a file (multipart)."""

    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser]

    @extend_schema(responses=DataFileSerializer(many=True), parameters=PAGE_PARAMETERS)
    def get(self, request: Request, slug: str) -> Response:
        return _listing(request, _host_competition(request, slug))

    @extend_schema(
        summary="Attach a data file",
        description="Multipart `file`, optional `name`, `description` and `replace`. Every participant who is "
        "signed in may download it: never attach the hidden labels unless you mean to publish them.",
        request={"multipart/form-data": DataFileUploadSerializer},
        responses={201: DataFileSerializer,
                   400: OpenApiResponse(description="a bad name or description, a taken name, an empty file, a zip "
                                        "or Parquet file that is not one; `detail` says which"),
                   403: OpenApiResponse(description="not the competition's host (nor staff)"),
                   413: OpenApiResponse(description="over LEADERBOARD_MAX_DATA_FILE_BYTES")},
    )
    def post(self, request: Request, slug: str) -> Response:
        competition = _host_competition(request, slug)
        limit = int(settings.LEADERBOARD_MAX_DATA_FILE_BYTES)
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > limit + _MULTIPART_SLACK:  # refused before the body is read (and spooled to disk)
            raise DataFileTooLarge(f"the upload is {declared:,} bytes, larger than {limit:,} bytes, the most a "
                                   "data file may be")
        payload = DataFileUploadSerializer(data=request.data)
        if not payload.is_valid():
            raise ValidationError(payload.errors)
        upload = payload.validated_data["file"]
        name = payload.validated_data["name"] or upload.name or ""
        data_file = add_data_file(competition, name, upload, payload.validated_data["description"],
                                  replace=payload.validated_data["replace"])
        serializer = DataFileSerializer(data_file, context={"slug": competition.slug, "request": request})
        return Response(serializer.data, status=status.HTTP_201_CREATED)


class HostDataFileApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Remove a data file", responses={204: None})
    def delete(self, request: Request, slug: str, name: str) -> Response:
        competition = _host_competition(request, slug)
        try:
            remove_data_file(data_file_get(competition=competition, name=name))
        except DataFile.DoesNotExist:
            raise NotFound("no such data file") from None
        return Response(status=status.HTTP_204_NO_CONTENT)
